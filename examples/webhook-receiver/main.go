// Command webhook-receiver is a minimal merchant-side receiver for payd's
// webhooks: it verifies each delivery's signature with package webhook,
// ignores repeats of an event it already handled, and prints what arrived.
//
//	export PAYD_WEBHOOK_SECRET=whsec_...   # from POST /v1/webhook_endpoints, or printed by `payd listen`
//	go run ./examples/webhook-receiver -addr 127.0.0.1:4242
//
// Register http://127.0.0.1:4242/webhooks as a test-mode endpoint, or run
// `payd listen --forward-to http://127.0.0.1:4242/webhooks` and use the
// secret it prints.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/payd/payd/webhook"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:4242", "address to listen on")
	path := flag.String("path", "/webhooks", "path deliveries are posted to")
	flag.Parse()
	secret := os.Getenv("PAYD_WEBHOOK_SECRET")
	if secret == "" {
		log.Fatal("set PAYD_WEBHOOK_SECRET to the endpoint's signing secret (whsec_...)")
	}
	mux := http.NewServeMux()
	mux.Handle("POST "+*path, handler(secret, webhook.NewDedup(100000), os.Stdout))
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Printf("listening on http://%s%s", *addr, *path)
	log.Fatal(srv.ListenAndServe())
}

// handler verifies, de-duplicates and acknowledges deliveries. Real work
// should be quick (payd waits 5 s) or handed to a queue before answering.
func handler(secret string, seen *webhook.Dedup, out interface{ Write([]byte) (int, error) }) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _, err := webhook.VerifyRequest(r, secret)
		switch {
		case errors.Is(err, webhook.ErrTimestampOutsideTolerance):
			http.Error(w, "stale delivery", http.StatusBadRequest)
			return
		case err != nil:
			http.Error(w, "signature verification failed", http.StatusBadRequest)
			return
		}
		if !seen.FirstTime(d.EventID) {
			fmt.Fprintf(out, "repeat of %s ignored\n", d.EventID)
			w.WriteHeader(http.StatusOK)
			return
		}
		var obj struct {
			Status string `json:"status"`
		}
		json.Unmarshal(d.Event.Data.Object, &obj)
		fmt.Fprintf(out, "%s  %-32s %s  object %s status %q (signature verified)\n",
			time.Now().UTC().Format(time.RFC3339), d.EventType, d.EventID, d.Event.Data.ID, obj.Status)
		w.WriteHeader(http.StatusOK)
	})
}
