// The baseline: a bare Bun.serve hello handler, no framework, no middleware.
const server = Bun.serve({ port: 0, reusePort: false, fetch: () => Response.json({ status: 'ok' }) })
console.log(JSON.stringify({ msg: 'listening', url: `http://127.0.0.1:${server.port}` }))
