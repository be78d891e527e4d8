package config

import (
	"context"
	"fmt"
	"net"
	"time"
)

// LocalOnlyVar is the variable that keeps every provider on this machine.
const LocalOnlyVar = "STRATA_LOCAL_ONLY"

// LocalOnlyHint says what STRATA_LOCAL_ONLY=true allows, for error messages.
const LocalOnlyHint = "STRATA_LOCAL_ONLY=true allows only this machine (localhost, 127.0.0.1, [::1] or a unix:// socket)"

// Resolver looks up a host's addresses: net.DefaultResolver.LookupIPAddr,
// or a table in tests.
type Resolver func(ctx context.Context, host string) ([]net.IPAddr, error)

// CheckLoopback reports why host is not this machine, or nil when it is: a
// loopback address, or a name that resolves only to loopback addresses
// (localhost). A name that does not resolve is refused, since it cannot be
// shown to be local. A nil lookup uses the system resolver.
func CheckLoopback(host string, lookup Resolver) error {
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return fmt.Errorf("host %s is not a loopback address", host)
		}
		return nil
	}
	if lookup == nil {
		lookup = net.DefaultResolver.LookupIPAddr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	addrs, err := lookup(ctx, host)
	if err != nil {
		return fmt.Errorf("host %s does not resolve here, so it cannot be shown to be on this machine (%w)", host, err)
	}
	if len(addrs) == 0 {
		return fmt.Errorf("host %s resolves to no address", host)
	}
	for _, a := range addrs {
		if !a.IP.IsLoopback() {
			return fmt.Errorf("host %s resolves to %s, which is not a loopback address", host, a.IP)
		}
	}
	return nil
}
