// Dashboard behaviour that is not htmx. Served from /public so the CSP needs no inline script.
// Copy buttons: <button data-copy="value">, delegated so htmx-swapped fragments work too.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null
  if (!button) return
  navigator.clipboard.writeText(button.dataset.copy ?? '').then(() => {
    button.textContent = 'Copied'
  })
})

// Fields asked for one choice of a select alone: <fieldset data-shown-for="<select id>=<value>">.
// Hidden, the fieldset is disabled too, so what it holds is not sent.
function showChosenFields() {
  for (const fieldset of document.querySelectorAll('fieldset[data-shown-for]')) {
    const [id, value] = fieldset.dataset.shownFor.split('=')
    const shown = document.getElementById(id)?.value === value
    fieldset.hidden = !shown
    fieldset.disabled = !shown
  }
}
document.addEventListener('change', (event) => {
  if (event.target instanceof HTMLSelectElement) showChosenFields()
})
// A page restored from history keeps the choice its select had.
window.addEventListener('pageshow', showChosenFields)

// Settings → Branding: the preview of the sign-in card follows the form as it is typed, and the
// contrast warnings follow it too (WCAG 2.2 contrast, as src/shared/contrast.ts computes it for the
// page as first drawn). The colours go through the CSSOM: the policy allows no inline style.
const BRAND_DEFAULTS = { primary: '#4f46e5', background: '#f3f4f8', text: '#1f2330' }
const AA_TEXT = 4.5
const hexColour = (value, fallback) => (/^#[0-9a-fA-F]{6}$/.test(value.trim()) ? value.trim().toLowerCase() : fallback)
function luminance(hex) {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  })
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}
function contrast(a, b) {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (light + 0.05) / (dark + 0.05)
}
function showContrast(id, ratio) {
  const warning = document.getElementById(id)
  if (!warning) return
  warning.hidden = ratio >= AA_TEXT
  warning.textContent = `${warning.dataset.what} has a contrast of ${ratio.toFixed(2)}:1, below the ${AA_TEXT}:1 WCAG AA asks of text. Some users will not be able to read it.`
}
function previewBranding() {
  const preview = document.getElementById('branding-preview')
  if (!preview) return
  const form = document.getElementById('branding-form')
  const field = (name, fallback) => {
    const input = form?.elements.namedItem(name)
    return input instanceof HTMLInputElement ? input.value : fallback
  }
  const primary = hexColour(field('primary_color', preview.dataset.primary), BRAND_DEFAULTS.primary)
  const background = hexColour(field('background_color', preview.dataset.background), BRAND_DEFAULTS.background)
  const text = hexColour(field('text_color', preview.dataset.text), BRAND_DEFAULTS.text)
  preview.style.setProperty('--preview-primary', primary)
  preview.style.setProperty('--preview-background', background)
  preview.style.setProperty('--preview-text', text)
  const name = document.getElementById('branding-preview-name')
  if (name && form) name.textContent = field('display_name', '').trim()
  showContrast('branding-contrast-primary', contrast('#ffffff', primary))
  showContrast('branding-contrast-text', contrast(text, '#ffffff'))
}
document.addEventListener('input', (event) => {
  if (event.target instanceof HTMLInputElement && event.target.form?.id === 'branding-form') previewBranding()
})
// Each colour's picker (<input type="color" data-hex-for="<hex field id>">) and its hex field follow
// each other; the hex field is what the form sends. An empty or unfinished hex shows the platform's.
document.addEventListener('input', (event) => {
  const input = event.target
  if (!(input instanceof HTMLInputElement)) return
  if (input.type === 'color' && input.dataset.hexFor) {
    const hex = document.getElementById(input.dataset.hexFor)
    if (!(hex instanceof HTMLInputElement)) return
    hex.value = input.value
    hex.dispatchEvent(new Event('input', { bubbles: true }))
    return
  }
  const picker = input.id ? document.querySelector(`input[type=color][data-hex-for="${input.id}"]`) : null
  if (picker instanceof HTMLInputElement) picker.value = hexColour(input.value, picker.dataset.platform)
})
document.addEventListener('DOMContentLoaded', previewBranding)
document.addEventListener('htmx:afterSettle', previewBranding)

// The logo's upload shows its progress (htmx reports the request's upload progress).
document.addEventListener('htmx:xhr:progress', (event) => {
  const form = event.target instanceof Element ? event.target.closest('#branding-logo-form') : null
  const bar = form?.querySelector('progress')
  if (!bar || !event.detail.lengthComputable) return
  bar.hidden = false
  bar.value = Math.round((event.detail.loaded / event.detail.total) * 100)
})

// On a narrow screen the workspace sidebar is a tab bar that scrolls: bring the current tab into view.
document.addEventListener('DOMContentLoaded', () => {
  const current = document.querySelector('.sidebar [aria-current=page]')
  const bar = current?.closest('ul')
  if (!current || !bar || bar.scrollWidth <= bar.clientWidth) return
  bar.scrollLeft = current.offsetLeft - bar.offsetLeft - 16
})
