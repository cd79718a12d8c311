// oidc-provider prints "Unsupported runtime" on anything but Node.js LTS when it loads. Gatehouse
// runs it on Bun on purpose (its flows are covered by our tests), and a stray non-JSON line would
// break the structured log; drop exactly that line. Imported before oidc-provider.
const warn = console.warn
console.warn = (...args: unknown[]) => {
  if (typeof args[0] === 'string' && args[0].startsWith('oidc-provider WARNING: Unsupported runtime')) return
  warn(...args)
}
