// Package server serves queryd's tools: over MCP on stdio (`queryd mcp`),
// over MCP streamable HTTP at /mcp and as HTTP JSON (`queryd serve`), with
// roles from bearer tokens, bounded concurrency, request logs and metrics.
//
// Every transport goes through one call path (Server.call): role check,
// concurrency slot, timeout, the tool, then one log line and one metric. The
// error kinds of package qerr map to HTTP status codes in one table
// (errorKinds) and to MCP tool results in one function (toolResultError).
//
// # Arguments are written once
//
// A tool's arguments are one Go struct in the package that does the work
// (search.Request for strata_search). Its json tags name the arguments, a
// field without omitempty is required, and its Args method (package
// toolargs) gives each one a description and its limits, taken from that
// package's constants. From that struct come, with nothing copied:
//
//   - the JSON schema MCP clients list (toolargs.Schema, types derived by
//     jsonschema-go, the library mcp-go uses);
//   - the decoder that every transport runs in Tool.Call (toolargs.Decode):
//     it refuses what the schema refuses, as invalid_argument naming the
//     argument, counts null as left out, then runs the struct's Validate;
//   - the OpenAPI document at /openapi.json (openAPIDocument), which adds
//     the tool's path, its request schema and its error responses to the
//     hand-written openapi_base.json. The committed openapi.json is a copy
//     for readers; TestOpenAPIFileIsGenerated fails when it is stale, and
//     `go generate ./queryd/internal/server` rewrites it.
//
// TestSchemaAndHandlersAgree sends each tool values at and past every limit
// its schema declares, over HTTP and MCP, and fails when the handler and
// the schema disagree about one of them.
//
// # Adding a tool
//
//  1. In the tool's own package (ask, verify, …; never this one), write the
//     argument struct with json tags, its Args method with the limits as
//     constants, and a Validate method for checks a schema cannot express
//     (a blank string, a page written as digits). Decode enforces the
//     declared limits before Validate runs; Validate keeps the checks that
//     callers building the struct in Go (`queryd search`) rely on.
//  2. Here, write a toolSpec[YourArgs] in a file of its own: name,
//     description, AdminOnly and Bounded, HTTPPath when it has an HTTP
//     endpoint, Component (the stem of its OpenAPI schemas), Response (the
//     Go type of its answer), Logged (the text the request log shows) and
//     Run, which returns false when the dependency it needs is missing from
//     Deps. Add `yourSpec.def()` to toolDefs.
//  3. Write the response schema as <Component>Response in openapi_base.json,
//     run `go generate ./queryd/internal/server`, and commit openapi.json.
//     TestOpenAPIResponseSchemasMatchGoTypes checks the response schema
//     against the Go type; TestSchemaAndHandlersAgree picks up the new tool
//     by itself.
//  4. Say in instructions.go when clients should call it.
package server
