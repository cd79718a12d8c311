// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { sanitizeSvg } from './svg'

const svg = (inner: string, rootAttrs = '') =>
  `<svg xmlns="http://www.w3.org/2000/svg"${rootAttrs}>${inner}</svg>`

/** The sanitised document's inside, or the reason it was refused. */
function inside(inner: string): string {
  const res = sanitizeSvg(svg(inner))
  if (!res.ok) return `refused: ${res.reason}`
  return res.svg.replace(/^<svg[^>]*>|<\/svg>$/g, '')
}

describe('CSS in an uploaded SVG', () => {
  it('refuses what reaches out however it is spelled: CSS escapes, comments, entities, image functions, at-rules', () => {
    const cases: [string, RegExp][] = [
      // CSS Syntax §4.3.7: \75 is "u", with or without the whitespace that ends a hex escape.
      ['<style>rect{fill:\\75rl(https://evil.example/p)}</style>', /external reference/],
      ['<style>rect{fill:\\000075 rl(https://evil.example/p)}</style>', /external reference/],
      ['<style>rect{fill:\\u\\r\\l(https://evil.example/p)}</style>', /external reference/],
      ['<style>rect{fill:url(\\68ttps://evil.example/p)}</style>', /external reference/],
      ['<style>@\\69mport "https://evil.example/a.css";</style>', /@import/],
      ['<style>@import/**/"https://evil.example/a.css";</style>', /@import/],
      ['<style>@IMPORT url(a.css);</style>', /@import|external reference/],
      ['<style>@font-face{font-family:x;src:local(x)}</style>', /@font-face/],
      ['<style>rect{fill:u/**/rl(https://evil.example/p)}</style>', /external reference/],
      ['<style>rect{background:image-set("https://evil.example/p" 1x)}</style>', /image-set/],
      ['<style>rect{background:-webkit-image-set("https://evil.example/p" 1x)}</style>', /image-set/],
      ['<style>rect{background:image("https://evil.example/p")}</style>', /image\(\)/],
      ['<style>rect{background:cross-fade("https://a.example/p", "b")}</style>', /cross-fade/],
      ['<style>rect{background:element(#a)}</style>', /element\(\)/],
      ['<style>rect{width:expression(alert(1))}</style>', /script/],
      // An entity splits the text htmlparser2 reports: the sheet is judged whole.
      ['<style>rect{fill:u&#114;l(https://evil.example/p)}</style>', /external reference/],
      ['<style><![CDATA[rect{fill:\\75rl(https://evil.example/p)}]]></style>', /external reference/],
      // A string does not hide what follows it, nor does a comment-like string.
      ['<style>rect{font-family:"a/*" url(https://evil.example/p) "*/"}</style>', /external reference/],
      ['<rect style="fill:\\75rl(https://evil.example/p)"/>', /external reference/],
      ['<rect style="background:image-set(&quot;https://evil.example/p&quot; 1x)"/>', /image-set/],
      ['<rect style="fill:u/**/rl(https://evil.example/p)"/>', /external reference/],
      // Presentation attributes are CSS values too.
      ['<rect fill="\\75rl(https://evil.example/p)"/>', /external reference/],
    ]
    for (const [inner, reason] of cases) {
      const got = inside(inner)
      expect([inner, got]).toEqual([inner, expect.stringMatching(/^refused: /)])
      expect(got).toMatch(reason)
    }
  })

  it('keeps the properties a logo draws with, written back without escapes or comments', () => {
    expect(inside('<style>.a { fill: #123456 }</style>')).toBe('<style>.a { fill: #123456 }</style>')
    expect(inside('<rect style="fill:#123456;stroke:RED"/>')).toBe(
      '<rect style="fill: #123456; stroke: RED"></rect>',
    )
    expect(inside('<style>rect{fill:url(#g)}</style>')).toBe('<style>rect { fill: url(#g) }</style>')
    expect(inside('<style><![CDATA[.b > path { stroke-width: 2px; opacity: .5 }]]></style>')).toBe(
      '<style>.b &gt; path { stroke-width: 2px; opacity: .5 }</style>',
    )
    expect(
      inside(
        '<style>/* brand */ text { font-family: "Helvetica Neue", Arial, sans-serif; font-weight: 700 }</style>',
      ),
    ).toBe('<style>text { font-family: "Helvetica Neue", Arial, sans-serif; font-weight: 700 }</style>')
    expect(inside('<g style="transform: translate(10px, 2px) rotate(45deg); fill: rgb(1 2 3 / 50%)"/>')).toBe(
      '<g style="transform: translate(10px, 2px) rotate(45deg); fill: rgb(1 2 3 / 50%)"></g>',
    )
    // Escapes that decode to plain text are written as that text.
    expect(inside('<style>.c{f\\69ll:#\\31 23}</style>')).toBe('<style>.c { fill: #123 }</style>')
  })

  it('drops what a logo does not need: other properties, custom properties, other at-rules, odd values', () => {
    expect(inside('<style>rect{position:fixed;fill:#fff;--x:1;content:"a"}</style>')).toBe(
      '<style>rect { fill: #fff }</style>',
    )
    expect(
      inside('<style>@media (prefers-color-scheme: dark) { rect { fill: #fff } } circle{fill:#000}</style>'),
    ).toBe('<style>circle { fill: #000 }</style>')
    expect(inside('<style>@charset "utf-8"; rect{fill:#000}</style>')).toBe(
      '<style>rect { fill: #000 }</style>',
    )
    expect(inside('<style>rect{fill:var(--brand)}</style>')).toBe('<style></style>')
    expect(inside('<rect style="position:absolute"/>')).toBe('<rect></rect>')
    expect(inside('<style>rect{fill:#000}<g/>circle{fill:#fff}</style>')).toBe(
      '<style>rect { fill: #000 }\ncircle { fill: #fff }</style>',
    )
  })
})
