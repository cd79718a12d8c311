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
