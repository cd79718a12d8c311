/** What a mail shows of the workspace it is sent for (its branding), or of the platform. */
export interface MailBrand {
  displayName: string
  logoUrl: string | null
  primaryColor: string
  backgroundColor: string
  textColor: string
  privacyPolicyUrl: string | null
  termsUrl: string | null
}

export const PLATFORM_BRAND: MailBrand = {
  displayName: 'Gatehouse',
  logoUrl: null,
  primaryColor: '#4f46e5',
  backgroundColor: '#f3f4f8',
  textColor: '#1f2330',
  privacyPolicyUrl: null,
  termsUrl: null,
}

const COLOR = /^#[0-9a-f]{6}$/i
/** A colour for a style attribute: only `#rrggbb` ever reaches one, whatever the row holds. */
const color = (value: string, fallback: string) => (COLOR.test(value) ? value : fallback)
const LINK = /https?:\/\/[^\s<>"]+/g

/** One line of the text, its links made links (the text is the whole message: the HTML adds no secret). */
function Line({ line, primary }: { line: string; primary: string }) {
  const parts: (string | { href: string })[] = []
  let at = 0
  for (const m of line.matchAll(LINK)) {
    if (m.index > at) parts.push(line.slice(at, m.index))
    parts.push({ href: m[0] })
    at = m.index + m[0].length
  }
  if (at < line.length) parts.push(line.slice(at))
  return (
    <>
      {parts.map((p) =>
        typeof p === 'string' ? (
          <span safe>{p}</span>
        ) : (
          <a href={p.href} style={`color:${primary};word-break:break-all`} safe>
            {p.href}
          </a>
        ),
      )}
    </>
  )
}

/**
 * The HTML part of a mail: the same words as its text part, in the sender's colours, with its name
 * and logo on top and its privacy and terms links below. Every value is escaped; colours are
 * checked again; the only links are the text's own and the legal ones.
 */
export function renderMailHtml(text: string, brand: MailBrand): string {
  const primary = color(brand.primaryColor, PLATFORM_BRAND.primaryColor)
  const background = color(brand.backgroundColor, PLATFORM_BRAND.backgroundColor)
  const ink = color(brand.textColor, PLATFORM_BRAND.textColor)
  const paragraphs = text.trim().split(/\n{2,}/)
  const legal = [
    brand.privacyPolicyUrl ? { href: brand.privacyPolicyUrl, label: 'Privacy policy' } : null,
    brand.termsUrl ? { href: brand.termsUrl, label: 'Terms' } : null,
  ].filter((l) => l !== null)
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
        </head>
        <body
          style={`margin:0;padding:24px;background:${background};color:${ink};font:15px/1.5 system-ui,sans-serif`}
        >
          <div style="max-width:520px;margin:0 auto;background:#ffffff;border-radius:12px;padding:28px">
            <div style={`border-bottom:3px solid ${primary};padding-bottom:12px;margin-bottom:16px`}>
              {brand.logoUrl ? (
                <img src={brand.logoUrl} alt={brand.displayName} style="max-height:40px;max-width:200px" />
              ) : (
                <strong style="font-size:18px" safe>
                  {brand.displayName}
                </strong>
              )}
            </div>
            {paragraphs.map((p) => (
              <p style={`margin:0 0 14px;color:${ink}`}>
                {p.split('\n').map((line, i) => (
                  <>
                    {i > 0 ? <br /> : ''}
                    <Line line={line} primary={primary} />
                  </>
                ))}
              </p>
            ))}
            {legal.length ? (
              <p style="margin:20px 0 0;font-size:12px;color:#5b6170">
                {legal.map((l, i) => (
                  <>
                    {i > 0 ? ' · ' : ''}
                    <a href={l.href} style="color:#5b6170" safe>
                      {l.label}
                    </a>
                  </>
                ))}
              </p>
            ) : (
              ''
            )}
          </div>
        </body>
      </html>
    </>
  ) as string
}
