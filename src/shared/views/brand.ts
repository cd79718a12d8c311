import { AsyncLocalStorage } from 'node:async_hooks'
import { cspHash } from '../security-headers'

/** A workspace's look on its hosted pages (DESIGN "Branding"); every field optional. */
export interface BrandSettings {
  displayName: string | null
  /** `#rrggbb`: buttons and links. */
  primaryColor: string | null
  /** `#rrggbb`: the page behind the card. */
  backgroundColor: string | null
  /** `#rrggbb`: the card's text. */
  textColor: string | null
  privacyPolicyUrl: string | null
  termsUrl: string | null
}

/** What the hosted layout draws a branded page with. */
export interface HostedBrand extends BrandSettings {
  logoUrl: string | null
  /** The colours as CSS custom properties, in a style element of their own; null without colours. */
  style: string | null
  /** The CSP source that allows `style` (the instance's policy adds it to `style-src`). */
  styleHash: string | null
}

/** Button labels are white on the primary colour: the dashboard warns when that is hard to read. */
export const BUTTON_LABEL_COLOR = '#ffffff'
/** The card the hosted pages' text sits on. */
export const CARD_COLOR = '#ffffff'

const HEX = /^#[0-9a-f]{6}$/

/**
 * The brand the pages of an instance are drawn with, or null when nothing is set (the platform's
 * look). The colours were checked when stored; checked again here because they go into a style
 * element, where anything but a colour would be CSS.
 */
export function hostedBrand(settings: BrandSettings, logoUrl: string | null): HostedBrand | null {
  const named: [string, string | null][] = [
    ['--brand-primary', settings.primaryColor],
    ['--brand-background', settings.backgroundColor],
    ['--brand-text', settings.textColor],
  ]
  const colours = named.filter((c): c is [string, string] => c[1] !== null && HEX.test(c[1]))
  const style = colours.length
    ? `:root{${colours.map(([name, value]) => `${name}:${value}`).join(';')}}`
    : null
  const any = Object.values(settings).some((v) => v !== null) || logoUrl !== null
  if (!any) return null
  return { ...settings, logoUrl, style, styleHash: style ? cspHash(style) : null }
}

/**
 * The brand of the request being answered. Every page of an instance, those oidc-provider draws
 * through its page sources and error renderer included, is drawn inside the bridge's dispatch of
 * that instance's request, which runs it in `drawnWithBrand`; threading the brand through every
 * renderer would miss the next one added. Outside it (the control plane's signed-out pages, the
 * front door's own errors) pages keep the platform's look.
 */
const current = new AsyncLocalStorage<HostedBrand | null>()

export const drawnWithBrand = <T>(brand: HostedBrand | null, draw: () => T): T =>
  // An unbranded instance draws as the platform does, which is also what no scope gives: its
  // requests (the token path's included) skip the context's cost.
  brand ? current.run(brand, draw) : draw()

export const currentBrand = (): HostedBrand | null => current.getStore() ?? null
