package search

import (
	"container/list"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// cache keeps the responses of recent searches. An entry is valid only for
// the data version it was made at (store.Version, which changes when an
// ingest changes any layer's chunks, vectors or settings), so an ingest
// invalidates it without any message between the daemons.
type cache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List
	items map[string]*list.Element
}

type cacheEntry struct {
	key, version string
	resp         *Response
}

func newCache(n int) *cache {
	return &cache{max: n, ll: list.New(), items: map[string]*list.Element{}}
}

func cacheKey(r Request) string {
	var b strings.Builder
	b.WriteString(r.Query)
	b.WriteString("\x00")
	// The same layers named in another order, or more than once, are the
	// same search (Validate drops repeats; this sorts and dedupes again for
	// requests that did not go through it).
	ls := append([]string(nil), r.Layers...)
	sort.Strings(ls)
	ls = slices.Compact(ls)
	b.WriteString(strings.Join(ls, "\x01"))
	b.WriteString("\x00" + strconv.Itoa(r.TopK) + "\x00" + strconv.FormatBool(r.Explain) + "\x00")
	keys := make([]string, 0, len(r.MetadataFilter))
	for k := range r.MetadataFilter {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k + "\x01" + r.MetadataFilter[k] + "\x02")
	}
	return b.String()
}

func (c *cache) get(key, version string) (*Response, bool) {
	if c.max <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if e.version != version {
		c.ll.Remove(el)
		delete(c.items, key)
		return nil, false
	}
	c.ll.MoveToFront(el)
	return copyResponse(e.resp), true
}

func (c *cache) put(key, version string, r *Response) {
	if c.max <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.ll.Remove(el)
	}
	c.items[key] = c.ll.PushFront(&cacheEntry{key: key, version: version, resp: copyResponse(r)})
	for c.ll.Len() > c.max {
		el := c.ll.Back()
		c.ll.Remove(el)
		delete(c.items, el.Value.(*cacheEntry).key)
	}
}

// copyResponse copies what a caller might change: the results and explain.
func copyResponse(r *Response) *Response {
	cp := *r
	// Never nil: a search that found nothing says "results": [], from the
	// cache too.
	cp.Results = append(make([]Result, 0, len(r.Results)), r.Results...)
	if r.Explain != nil {
		ex := *r.Explain
		cp.Explain = &ex
	}
	if r.RoutingFallback != nil {
		rf := *r.RoutingFallback
		cp.RoutingFallback = &rf
	}
	return &cp
}
