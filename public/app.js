// Dashboard behaviour that is not htmx. Served from /public so the CSP needs no inline script.
// Copy buttons: <button data-copy="value">, delegated so htmx-swapped fragments work too.
document.addEventListener('click', (event) => {
  const button = event.target instanceof Element ? event.target.closest('button[data-copy]') : null
  if (!button) return
  navigator.clipboard.writeText(button.dataset.copy ?? '').then(() => {
    button.textContent = 'Copied'
  })
})
