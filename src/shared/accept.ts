/** How much an Accept header wants `type`: the q of its most specific matching range, and where it stands. */
function preference(accept: string, type: string): { q: number; at: number } {
  let best = { q: 0, specificity: -1, at: Number.POSITIVE_INFINITY }
  for (const [at, entry] of accept.split(',').entries()) {
    const [range = '', ...params] = entry.trim().toLowerCase().split(';')
    const specificity =
      range === type ? 2 : range === `${type.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1
    if (specificity <= best.specificity) continue
    const q = Number(
      params
        .map((p) => p.trim())
        .find((p) => p.startsWith('q='))
        ?.slice(2) ?? 1,
    )
    best = { q: Number.isFinite(q) ? q : 0, specificity, at }
  }
  return best
}

/**
 * Whether a client prefers an HTML page to JSON (RFC 9110 §12.5.1: by q, then by the order it
 * lists them). A browser names text/html first; an OAuth client names JSON or nothing.
 */
export function prefersHtml(accept: string): boolean {
  const html = preference(accept, 'text/html')
  const json = preference(accept, 'application/json')
  return html.q > json.q || (html.q === json.q && html.q > 0 && html.at < json.at)
}
