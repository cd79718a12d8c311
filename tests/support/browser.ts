import { afterAll } from 'bun:test'
import { type Browser, chromium } from 'playwright-core'

let browser: Browser | null = null

/** Debian's Chromium driven by playwright-core (never a downloaded browser); one per test file. */
export async function sharedBrowser(): Promise<Browser> {
  if (!browser) {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
    afterAll(async () => {
      await browser?.close()
      browser = null
    })
  }
  return browser
}
