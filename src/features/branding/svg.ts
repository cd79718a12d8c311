import { Parser } from 'htmlparser2'
import { cssProblem, LOCAL_FRAGMENT, sanitizeDeclarations, sanitizeStyleSheet } from './svg-style'

/**
 * An uploaded SVG rewritten from what it parses to, keeping only drawing: elements and attributes
 * of an allowlist, text escaped again. What could act (a script, an event handler attribute, a
 * reference outside the document, a foreignObject, a style sheet that imports or fetches) is not
 * removed quietly but refused, with the reason: a logo that needed one is better fixed by its
 * owner than shown broken. Style sheets and `style` attributes are rewritten to the properties a
 * logo draws with (svg-style.ts). Editor metadata (Inkscape, Sodipodi, comments, `<?xml?>`, DOCTYPE) is
 * dropped. Entities are never expanded beyond XML's own, so no DOCTYPE trick reaches anything.
 */
type SvgResult = { ok: true; svg: string } | { ok: false; reason: string }

const SVG_NS = 'http://www.w3.org/2000/svg'
const XLINK_NS = 'http://www.w3.org/1999/xlink'

/** Drawing elements kept (SVG 1.1/2 names, case as written). Anything else is dropped with its content. */
const KEPT = new Set(
  (
    'svg g defs symbol use title desc path rect circle ellipse line polyline polygon text tspan textPath ' +
    'linearGradient radialGradient stop clipPath mask pattern marker style filter feBlend feColorMatrix ' +
    'feComponentTransfer feComposite feDropShadow feFlood feFuncA feFuncB feFuncG feFuncR feGaussianBlur ' +
    'feMerge feMergeNode feMorphology feOffset'
  ).split(' '),
)

/** Elements that run, embed or reach out: refused, never dropped quietly. Compared in lower case. */
const REFUSED: Record<string, string> = {
  script: 'a <script> element',
  foreignobject: 'a <foreignObject> element',
  iframe: 'an <iframe> element',
  embed: 'an <embed> element',
  object: 'an <object> element',
  handler: 'a <handler> element',
  listener: 'a <listener> element',
}

/** Attribute names kept besides plain ones (`fill`, `stroke-width`, `viewBox`…). */
const NAMESPACED = new Set(['xlink:href', 'xml:space', 'xml:lang', 'xmlns', 'xmlns:xlink'])
const PLAIN_NAME = /^[a-zA-Z][a-zA-Z0-9_.-]*$/

/** Why an element cannot stay (it runs, embeds or reaches out), or null. */
function elementProblem(name: string, attrs: Record<string, string>): string | null {
  const refused = REFUSED[name.toLowerCase()]
  if (refused) return `It contains ${refused}`
  for (const [attr, value] of Object.entries(attrs)) {
    if (/^on/i.test(attr)) return `It contains an event handler attribute (${attr})`
    if (/(^|:)href$/i.test(attr) && !LOCAL_FRAGMENT.test(value.trim()))
      return `It contains an external reference (${attr}="${value.trim().slice(0, 60)}")`
    // Presentation attributes are CSS values: judged as CSS reads them, escapes decoded.
    const why = cssProblem(value)
    if (why) return `It contains ${why} in ${attr}`
  }
  return null
}

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const escapeAttr = (s: string) => escapeText(s).replace(/"/g, '&quot;')

export function sanitizeSvg(source: string): SvgResult {
  const out: string[] = []
  /** Open elements: whether each is kept (a dropped one's content goes with it). */
  const open: boolean[] = []
  let dropping = 0
  let rootSeen = false
  let rootAt = -1
  let rootAttrs = ''
  let usesXlink = false
  let inStyle = false
  /** The text of the open style element, rewritten when it closes. */
  let sheet = ''
  let problem: string | null = null

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (problem) return
        // Checked on every element, dropped ones too: what would act is refused wherever it is.
        problem = elementProblem(name, attrs)
        if (problem) return
        // Nothing but text inside a style sheet: an element there is dropped with its content.
        const keep = dropping === 0 && !inStyle && KEPT.has(name) && (rootSeen || name === 'svg')
        open.push(keep)
        if (!keep) {
          dropping++
          return
        }
        let written = ''
        for (const [attr, value] of Object.entries(attrs)) {
          if (!PLAIN_NAME.test(attr) && !NAMESPACED.has(attr)) continue
          if (attr === 'xmlns' && value !== SVG_NS) continue
          if (attr === 'xmlns:xlink' && value !== XLINK_NS) continue
          if (attr === 'xlink:href') usesXlink = true
          let kept = value
          if (attr === 'style') {
            // Judged whole in elementProblem; rewritten here to what a logo draws with.
            const style = sanitizeDeclarations(value)
            if (!style.ok || !style.css) continue
            kept = style.css
          }
          written += ` ${attr}="${escapeAttr(kept)}"`
        }
        if (!rootSeen) {
          rootSeen = true
          rootAt = out.length
          rootAttrs = written
        }
        if (name === 'style') {
          inStyle = true
          sheet = ''
        }
        out.push(`<${name}${written}>`)
      },
      ontext(text) {
        if (problem || dropping > 0 || !rootSeen || open.length === 0) return
        // A sheet comes in pieces (an entity ends one): it is judged whole when it closes.
        if (inStyle) sheet += text
        else out.push(escapeText(text))
      },
      onclosetag(name) {
        if (problem) return
        const kept = open.pop()
        if (kept === undefined) return
        if (!kept) {
          dropping--
          return
        }
        if (name === 'style') {
          inStyle = false
          const clean = sanitizeStyleSheet(sheet)
          if (!clean.ok) {
            problem = `Its style sheet contains ${clean.reason}`
            return
          }
          out.push(escapeText(clean.css))
        }
        out.push(`</${name}>`)
      },
    },
    { xmlMode: true, recognizeCDATA: true, recognizeSelfClosing: true, decodeEntities: true },
  )
  parser.write(source)
  parser.end()
  if (problem) return { ok: false, reason: problem }
  if (!rootSeen) return { ok: false, reason: 'It has no <svg> element' }
  // Served on its own, an SVG draws only in the SVG namespace; a kept xlink:href needs its prefix.
  let attrs = rootAttrs
  if (!/ xmlns="/.test(attrs)) attrs = ` xmlns="${SVG_NS}"${attrs}`
  if (usesXlink && !/ xmlns:xlink="/.test(attrs)) attrs += ` xmlns:xlink="${XLINK_NS}"`
  out[rootAt] = `<svg${attrs}>`
  return { ok: true, svg: out.join('') }
}
