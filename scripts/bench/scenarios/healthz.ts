// `healthz`: GET /healthz through the full middleware stack vs a bare Bun.serve hello handler.
import { expect200 } from '../load'
import { startGatehouse, startServerScript } from '../process'
import { httpSide, type SideSpec, throughput } from '../scenario'

/** A bare Bun.serve hello handler: no framework, no middleware (servers/hello.ts). */
export const bareHello: SideSpec = {
  name: 'bare Bun.serve hello',
  async start(opts) {
    const s = await startServerScript('hello.ts')
    return httpSide(this.name, s, () => new Request(`${s.url}/`), expect200, opts)
  },
}

export default throughput({
  description: 'GET /healthz through the full middleware stack vs a bare Bun.serve hello handler',
  minRatio: 0.5,
  baseline: bareHello,
  subject: {
    name: 'gatehouse: healthz',
    async start(opts) {
      const gh = await startGatehouse({ logLevel: opts.logLevel })
      return httpSide(this.name, gh, () => new Request(`${gh.url}/healthz`), expect200, opts)
    },
  },
})
