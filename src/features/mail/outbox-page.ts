import { escapeHtml } from '@kitajs/html'
import { isoTime } from '../../shared/clock'
import type { DevMail } from './outbox'

// Stops at characters that cannot be in a bare URL in plain text, so an href never breaks out of
// its attribute; trailing punctuation belongs to the sentence, not the link.
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`]+/g
const TRAILING_PUNCTUATION = /[.,;:!?)\]]+$/

/** Escapes plain text and turns the http(s) URLs in it into links. */
export function linkify(text: string): string {
  let html = ''
  let from = 0
  for (const match of text.matchAll(URL_IN_TEXT)) {
    const url = match[0].replace(TRAILING_PUNCTUATION, '')
    const href = escapeHtml(url)
    html += `${escapeHtml(text.slice(from, match.index))}<a href="${href}">${href}</a>`
    from = match.index + url.length
  }
  return html + escapeHtml(text.slice(from))
}

const mailHtml = (mail: DevMail) => `
<article>
  <header>
    <h2>${escapeHtml(mail.subject)}</h2>
    <p>to <strong>${escapeHtml(mail.to)}</strong> · <time datetime="${isoTime(mail.createdAt)}">${isoTime(mail.createdAt)}</time></p>
  </header>
  <pre>${linkify(mail.text)}</pre>
</article>`

// `overflow-wrap`: a long recipient address breaks rather than scrolling a phone's page sideways.
const STYLE = `
body { font: 15px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #1f2328; overflow-wrap: break-word; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.05rem; margin: 0; }
article { border: 1px solid #d0d7de; border-radius: 8px; padding: 1rem; margin: 1rem 0; }
header p { margin: .25rem 0 0; color: #59636e; font-size: .9rem; }
pre { white-space: pre-wrap; word-break: break-word; font: 14px/1.5 ui-monospace, monospace; margin: .75rem 0 0; }
.note { color: #59636e; }`

/** A self-contained page (no script, no external asset) listing the mails of the dev outbox. */
export const outboxPage = (mails: DevMail[], limit: number) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Dev outbox · Gatehouse</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Dev outbox</h1>
<p class="note">No SMTP server is configured: mail is kept here instead of being sent (the latest ${limit} of the last 24 hours, newest first). <a href="/dev/outbox">Refresh</a> · <a href="/dev/outbox.json">JSON</a></p>
${mails.length === 0 ? '<p>No mail yet.</p>' : mails.map(mailHtml).join('\n')}
</body>
</html>
`
