package testenv

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"time"
)

// HashEmbeddings is a stand-in for a hosted embedding API in tests of
// processes that reach one over HTTP: an OpenAI-compatible /v1/embeddings
// handler whose 8-dimensional vectors are made from each text's hash (the
// same text always gets the same vector), answering each request after
// delay. served, when set, is called once per request answered.
func HashEmbeddings(model string, delay time.Duration, served func()) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		resp := struct {
			Data  []item `json:"data"`
			Model string `json:"model"`
		}{Model: model}
		for i, text := range req.Input {
			sum := sha256.Sum256([]byte(text))
			v := make([]float32, 8)
			for j := range v {
				v[j] = float32(sum[j]) + 1
			}
			resp.Data = append(resp.Data, item{Index: i, Embedding: v})
		}
		if served != nil {
			served()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	})
}
