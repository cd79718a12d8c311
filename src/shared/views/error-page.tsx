import { Alert } from './components'
import { Shell } from './layout'

const TITLES: Record<number, string> = {
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  422: 'Check your input',
  429: 'Too many changes',
}

/** An error as the dashboard shows it: a fragment for htmx requests, else a page. */
export function dashboardError(status: number, message: string, htmx: boolean): string {
  if (htmx) return (<Alert kind="error">{Bun.escapeHTML(message)}</Alert>) as string
  const title = TITLES[status] ?? 'Something went wrong'
  return (
    <Shell title={title}>
      <h1 safe>{title}</h1>
      <Alert kind="error">{Bun.escapeHTML(message)}</Alert>
      <p>
        <a href="/app/">Back to the dashboard</a>
      </p>
    </Shell>
  ) as string
}
