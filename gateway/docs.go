package gateway

import (
	"embed"
	"net/http"
)

// The API's OpenAPI 3 document and a page that renders it, both embedded:
// the docs work offline and load nothing from a CDN. The document's
// schemas are generated from the answers' Go types (openapi_schema_test.go).
//
//go:generate go test -run OpenAPISchemas -update .
//go:embed docs/openapi.json docs/index.html docs/live.html
var docs embed.FS

// OpenAPI returns the embedded OpenAPI document (for the contract test).
func OpenAPI() []byte {
	b, _ := docs.ReadFile("docs/openapi.json")
	return b
}

func serveDoc(name, contentType string) http.HandlerFunc {
	body, _ := docs.ReadFile(name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "public, max-age=300")
		_, _ = w.Write(body)
	}
}
