import type { TSchema } from '@sinclair/typebox'
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler'
import { t, ValidationError } from 'elysia'

/** A path without a schema of its own still names its workspace by a uuid. */
const WORKSPACE_PATH = t.Object({ workspace_id: t.String({ format: 'uuid' }) })

/**
 * A route's path parameters as its own schema declares them (read at registration through the
 * macro's `introspect`), checked by the guard before it looks the workspace up: what Elysia's
 * validation would answer about them, only sooner.
 */
export class RoutePath {
  private schema: TSchema = WORKSPACE_PATH
  private compiled?: TypeCheck<TSchema>

  /** The route's hooks as Elysia registers it. */
  read = (hooks: { params?: TSchema }) => {
    if (hooks.params) this.schema = hooks.params
  }

  /** The 422 that `params` deserve, or null when they are well formed. */
  problem(params: Record<string, string>): ValidationError | null {
    this.compiled ??= TypeCompiler.Compile(this.schema)
    return this.compiled.Check(params) ? null : new ValidationError('params', this.compiled, params)
  }
}
