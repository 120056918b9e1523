package resolvers

import (
	"html/template"
	"net/http"
)

// graphiqlHTML loads GraphiQL from a CDN: the page is static and the browser (not the server) fetches the
// assets, so the server needs no internet access. Versions are pinned.
const graphiqlHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Headwater GraphiQL</title>
<link rel="stylesheet" href="https://unpkg.com/graphiql@3.8.3/graphiql.min.css" crossorigin="anonymous">
<style>body{margin:0;height:100vh}#graphiql{height:100vh}</style>
</head>
<body>
<div id="graphiql">Loading…</div>
<script src="https://unpkg.com/react@18.3.1/umd/react.production.min.js" crossorigin="anonymous"></script>
<script src="https://unpkg.com/react-dom@18.3.1/umd/react-dom.production.min.js" crossorigin="anonymous"></script>
<script src="https://unpkg.com/graphiql@3.8.3/graphiql.min.js" crossorigin="anonymous"></script>
<script>
  const fetcher = GraphiQL.createFetcher({ url: {{.}} });
  ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, { fetcher }));
</script>
</body>
</html>
`

// GraphiQL serves the static GraphiQL page pointed at endpoint (e.g. "/graphql").
func GraphiQL(endpoint string) http.Handler {
	page := template.Must(template.New("graphiql").Parse(graphiqlHTML))
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_ = page.Execute(w, endpoint)
	})
}
