/**
 * WCAG 2.2 contrast of two `#rrggbb` colours (the definitions of "relative luminance" and
 * "contrast ratio"): from 1 (the same) to 21 (black on white). The dashboard warns below AA's
 * 4.5:1 for normal text; public/app.js computes the same for the live preview.
 */
export const AA_TEXT_CONTRAST = 4.5

function channel(hex: string): number {
  const c = Number.parseInt(hex, 16) / 255
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
}

function luminance(color: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => channel(color.slice(i, i + 2)))
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
}

export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (light! + 0.05) / (dark! + 0.05)
}
