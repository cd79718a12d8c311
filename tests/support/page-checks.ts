import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'

/**
 * What every page of the product must hold in a browser test (issue 57, "Finish"): nothing in the
 * console, nothing refused by the page's Content-Security-Policy, no serious or critical
 * accessibility violation (axe-core), and no horizontal scrolling at a phone's 375 px.
 *
 *   const problems = await collectConsoleErrors(page) // before the first goto: it adds an init script
 *   await page.goto(url)
 *   expect(await problems()).toEqual([])
 *   expect(await checkAccessibility(page)).toEqual([])
 *   expect(await checkNarrowViewport(page)).toEqual([])
 *
 * Each check answers what it found (an empty list when all is well), so a failing test prints the
 * offending messages, rules and nodes rather than a bare `false`.
 */

const AXE_SOURCE = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')

/**
 * Starts recording, for the rest of the page's life: console errors, uncaught exceptions and CSP
 * violations (a `securitypolicyviolation` listener injected into every document the page loads).
 * Call it before the first `goto`. The answer reads everything recorded so far, in every document
 * the page showed since (violations of a document left behind are kept by this side).
 */
export async function collectConsoleErrors(page: Page): Promise<() => Promise<string[]>> {
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`)
  })
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`))
  await page.exposeFunction('__reportViolation', (text: string) => problems.push(`csp: ${text}`))
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __reportViolation: (t: string) => void }).__reportViolation
      report(
        `${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber}`,
      )
    })
  })
  // A violation's report is asynchronous: let the page's event loop turn once before reading.
  return async () => {
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50))).catch(() => {})
    return [...problems]
  }
}

/**
 * What `collectConsoleErrors` recorded less the refusals a test provokes on purpose: a form sent
 * with a mistake is answered 4xx (422, 409), for which Chromium and htmx each log a line.
 */
export function besidesRefusals(problems: string[], statuses: number[]): string[] {
  const refused = new RegExp(`(status of|Response Status Error Code) (${statuses.join('|')})\\b`)
  return problems.filter((p) => !refused.test(p))
}

/** One axe-core finding, as a failing test prints it. */
export interface AccessibilityViolation {
  rule: string
  impact: string
  help: string
  nodes: string[]
}

/**
 * axe-core's serious and critical violations on the page as it stands (minor and moderate ones are
 * not counted). axe comes from node_modules: nothing is fetched.
 */
export async function checkAccessibility(page: Page): Promise<AccessibilityViolation[]> {
  const loaded = await page.evaluate(() => 'axe' in window)
  // Evaluated through the DevTools protocol: a script tag (addScriptTag) would be inline script,
  // which the pages' policy rightly refuses (and would report as a violation).
  if (!loaded) await page.evaluate(`${AXE_SOURCE}\n;0`)
  const violations = await page.evaluate(async () => {
    type Result = {
      id: string
      impact: string | null
      help: string
      nodes: { target: unknown[] }[]
    }
    const axe = (window as unknown as { axe: { run: (c: Document) => Promise<{ violations: Result[] }> } })
      .axe
    return (await axe.run(document)).violations.map((v) => ({
      rule: v.id,
      impact: v.impact ?? '',
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')),
    }))
  })
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
}

/**
 * Lays the page out 375 px wide (a small phone) and answers what makes it scroll sideways: empty
 * when the document's scroll width stays within 375 px, else that width and the widest elements
 * that pass the edge (by selector-ish name), to say what to fix. The viewport is left that wide.
 */
export async function checkNarrowViewport(page: Page): Promise<string[]> {
  await page.setViewportSize({ width: NARROW, height: page.viewportSize()?.height ?? 800 })
  return page.evaluate((narrow) => {
    const width = document.documentElement.scrollWidth
    if (width <= narrow) return []
    const name = (el: Element) =>
      `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${[...el.classList].map((c) => `.${c}`).join('')}`
    const past = [...document.body.querySelectorAll('*')]
      .map((el) => ({ el, right: Math.round(el.getBoundingClientRect().right) }))
      .filter(
        ({ el, right }) =>
          right > narrow && !(el.parentElement && el.parentElement.getBoundingClientRect().right > narrow),
      )
      .map(({ el, right }) => `${name(el)} reaches ${right}px`)
    return [`scrollWidth ${width}px > ${narrow}px`, ...past.slice(0, 5)]
  }, NARROW)
}

const NARROW = 375
