import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { CliError } from './exit-codes'

/** A person's login on one server, as the device flow (and each refresh) left it. */
export interface StoredLogin {
  access_token: string
  refresh_token: string | null
  /** When the access token expires (ms since the epoch). */
  expires_at: number
  /** The platform instance that issued the tokens: where they are refreshed and revoked. */
  issuer: string
  /** The public client of the device flow (the token's `client_id`). */
  client_id: string
  email: string | null
}

interface CredentialsFile {
  /** The server of the last login: the one used when no --base-url or GATEHOUSE_URL says otherwise. */
  default: string | null
  logins: Record<string, StoredLogin>
}

/**
 * The user's configuration directory: GATEHOUSE_CONFIG_DIR, else $XDG_CONFIG_HOME/gatehouse, else
 * ~/.config/gatehouse (the XDG Base Directory default, on macOS too, as gh and others do).
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GATEHOUSE_CONFIG_DIR) return env.GATEHOUSE_CONFIG_DIR
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'gatehouse')
}

/**
 * credentials.json in the config directory, keyed by server URL: readable by its owner alone
 * (0600 in a 0700 directory), and replaced whole (a rename) so a crash never leaves half a file.
 */
export class CredentialStore {
  readonly path: string

  constructor(readonly dir: string = configDir()) {
    this.path = join(dir, 'credentials.json')
  }

  private read(): CredentialsFile {
    if (!existsSync(this.path)) return { default: null, logins: {} }
    try {
      const file = JSON.parse(readFileSync(this.path, 'utf8')) as Partial<CredentialsFile>
      return { default: file.default ?? null, logins: file.logins ?? {} }
    } catch {
      throw new CliError(`${this.path} is not JSON: remove it and run \`gatehouse login\` again`)
    }
  }

  private write(file: CredentialsFile): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 })
    const temp = `${this.path}.${process.pid}.tmp`
    writeFileSync(temp, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 })
    // The mode given at creation passes through the umask; say it again.
    chmodSync(temp, 0o600)
    renameSync(temp, this.path)
  }

  /** The server of the last login, if any. */
  defaultServer(): string | null {
    return this.read().default
  }

  get(baseUrl: string): StoredLogin | null {
    return this.read().logins[baseUrl] ?? null
  }

  /** Keeps `login` for `baseUrl`; a new login (`asDefault`) also makes it the default server. */
  save(baseUrl: string, login: StoredLogin, asDefault = false): void {
    const file = this.read()
    file.logins[baseUrl] = login
    if (asDefault || !file.default) file.default = baseUrl
    this.write(file)
  }

  /** Forgets the login on `baseUrl`; whether there was one. */
  remove(baseUrl: string): boolean {
    const file = this.read()
    if (!file.logins[baseUrl]) return false
    delete file.logins[baseUrl]
    if (file.default === baseUrl) file.default = Object.keys(file.logins)[0] ?? null
    this.write(file)
    return true
  }
}
