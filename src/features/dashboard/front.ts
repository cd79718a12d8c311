import { Elysia } from 'elysia'

/** `/` has nothing of its own: a browser that opens the server's address lands on the dashboard. */
export const frontRoutes = () =>
  new Elysia({ name: 'front' }).get('/', ({ redirect }) => redirect('/app/', 302), { detail: { hide: true } })
