import { ApiClient, type TokenSource } from './api'
import { CredentialStore } from './config-store'
import { StoredLoginAuth } from './device-login'
import { CliError, EXIT } from './exit-codes'
import { KeyFileError, MachineKeyAuth } from './key-auth'
import { Output } from './output'

/** The options every command takes (program.ts), after commander read flags and environment. */
interface GlobalOptions {
  json?: boolean
  baseUrl?: string
  keyFile?: string
  workspace?: string
  retries?: string
}

/** Where the CLI goes when nothing names a server: the quick start's `npm start`. */
export const DEFAULT_BASE_URL = 'http://localhost:8080'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/** Retries after a 429 or 503 unless --retries says otherwise (SPEC's 1, 2, 4, 8, 16 s). */
const DEFAULT_RETRIES = 5

/**
 * What one command runs with: the server, the caller (a machine key file, or the person's stored
 * login on that server), the API client and the output. Built from the global options.
 */
export class CliContext {
  readonly out: Output
  readonly baseUrl: string
  readonly store = new CredentialStore()
  readonly keyAuth: MachineKeyAuth | null
  private authed: ApiClient | null = null

  constructor(private readonly opts: GlobalOptions) {
    this.out = new Output(Boolean(opts.json))
    try {
      this.keyAuth = opts.keyFile ? new MachineKeyAuth(opts.keyFile) : null
    } catch (e) {
      if (e instanceof KeyFileError) throw new CliError(e.message, EXIT.NOT_AUTHENTICATED)
      throw e
    }
    const fromKey = this.keyAuth?.file.token_url.replace(/\/v1\/auth\/token$/, '')
    this.baseUrl = (opts.baseUrl || fromKey || this.store.defaultServer() || DEFAULT_BASE_URL).replace(
      /\/+$/,
      '',
    )
  }

  private client(auth: TokenSource | null): ApiClient {
    const retries = Number(this.opts.retries ?? DEFAULT_RETRIES)
    if (!Number.isInteger(retries) || retries < 0)
      throw new CliError('--retries takes a whole number, 0 or more', EXIT.USAGE)
    return new ApiClient({
      baseUrl: this.baseUrl,
      auth,
      attempts: retries + 1,
      sleep: (ms) => {
        this.out.note(
          `gatehouse: the server is busy or rate limiting; trying again in ${(ms / 1000).toFixed(1)} s`,
        )
        return Bun.sleep(ms)
      },
    })
  }

  /** The API without credentials (the device flow). */
  anonymous(): ApiClient {
    return this.client(null)
  }

  /** The API as the caller: the key file when given, else the stored login (exit 3 without one). */
  api(): ApiClient {
    if (this.authed) return this.authed
    let auth: TokenSource | null = this.keyAuth
    if (!auth) {
      const login = this.store.get(this.baseUrl)
      if (!login)
        throw new CliError(
          `not logged in to ${this.baseUrl}: run \`gatehouse login\`, or pass --key-file`,
          EXIT.NOT_AUTHENTICATED,
        )
      auth = new StoredLoginAuth(this.store, this.baseUrl, login)
    }
    this.authed = this.client(auth)
    return this.authed
  }

  /**
   * The workspace a command acts on: `given` (or --workspace / GATEHOUSE_WORKSPACE), an id or the
   * name of one of the caller's workspaces; with a key file and nothing given, the key's own.
   */
  async workspaceId(given = this.opts.workspace): Promise<string> {
    if (!given) {
      if (this.keyAuth) return this.keyAuth.file.workspace_id
      throw new CliError('which workspace? Pass --workspace <id|name> or set GATEHOUSE_WORKSPACE', EXIT.USAGE)
    }
    if (UUID.test(given)) return given
    const { items } = await this.api().get<{ items: { id: string; name: string }[] }>('/v1/workspaces')
    const named = items.filter((w) => w.name === given)
    if (named.length === 1) return named[0]!.id
    if (!named.length) throw new CliError(`no workspace named "${given}"`, EXIT.NOT_FOUND)
    throw new CliError(`${named.length} workspaces are named "${given}": give its id`, EXIT.USAGE)
  }

  /** `/v1/workspaces/{id}` of the command's workspace, followed by `path`. */
  async workspacePath(path = '', given?: string): Promise<string> {
    return `/v1/workspaces/${await this.workspaceId(given)}${path}`
  }
}
