// Files imported `with { type: 'file' }` resolve to a path (embedded in the compiled executable).
declare module '*.css' {
  const path: string
  export default path
}
declare module '*/htmx.min.js' {
  const path: string
  export default path
}
declare module '*/standalone.js' {
  const path: string
  export default path
}
declare module '*/public/app.js' {
  const path: string
  export default path
}
declare module '*.svg' {
  const path: string
  export default path
}
