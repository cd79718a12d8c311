import { Type } from '@sinclair/typebox'
import { t } from 'elysia'

const EMAIL = '^[^\\s@<>,;:"()\\[\\]\\\\]+@[^\\s@<>,;:"()\\[\\]\\\\]+\\.[^\\s@<>,;:"()\\[\\]\\\\]+$'
const email = (description: string) =>
  t.String({
    minLength: 3,
    maxLength: 320,
    pattern: EMAIL,
    description,
    errorMessage: { pattern: 'Enter a valid email address.', minLength: 'Enter an email address.' },
  })

/** DESIGN "SMTP": a workspace's own mail server. */
export namespace SmtpModel {
  export const security = t.Union([t.Literal('starttls'), t.Literal('tls'), t.Literal('none')], {
    description: '`starttls` (upgrade on port 587, required), `tls` (TLS from the start, port 465) or `none`',
    errorMessage: { anyOf: 'Choose STARTTLS, TLS or none.' },
  })

  export const update = t.Object(
    {
      host: t.String({
        minLength: 1,
        maxLength: 253,
        pattern: '^\\s*[A-Za-z0-9.:\\[\\]-]+\\s*$',
        description:
          'A host name or IP address; private, loopback and link-local addresses are refused unless SMTP_ALLOW_PRIVATE=true (422)',
        errorMessage: {
          minLength: 'Enter the host name of the mail server.',
          maxLength: 'Use at most 253 characters.',
          pattern: 'Enter a host name or an IP address, e.g. smtp.example.com.',
        },
      }),
      // TypeBox's own Integer: Elysia's is a union with numeric strings, whose error names no rule.
      port: Type.Integer({
        minimum: 1,
        maximum: 65535,
        errorMessage: {
          type: 'Enter a port number.',
          minimum: 'Use 1 to 65535.',
          maximum: 'Use 1 to 65535.',
        },
      }),
      username: t.Optional(
        t.String({
          minLength: 1,
          maxLength: 320,
          pattern: '^[^\\x00-\\x1f\\x7f]+$',
          errorMessage: { maxLength: 'Use at most 320 characters.', pattern: 'Remove control characters.' },
        }),
      ),
      password: t.Optional(
        t.String({
          minLength: 1,
          maxLength: 1000,
          description:
            'Stored encrypted, never returned. Omitted: the current password is kept when host and username stay the same, else none is sent',
          errorMessage: { maxLength: 'Use at most 1000 characters.' },
        }),
      ),
      security: t.Optional(security),
      from_address: email('The sender of every mail of the workspace'),
      from_name: t.Optional(
        t.String({ maxLength: 200, errorMessage: { maxLength: 'Use at most 200 characters.' } }),
      ),
    },
    { additionalProperties: false },
  )
  export type Update = typeof update.static

  export const view = t.Object({
    provider: t.Union([t.Literal('custom'), t.Literal('platform')], {
      description: '`platform`: the instance default (only its sender is shown)',
    }),
    host: t.Nullable(t.String()),
    port: t.Nullable(t.Integer()),
    username: t.Nullable(t.String()),
    security: t.Nullable(security),
    from_address: t.String(),
    from_name: t.Nullable(t.String()),
    has_password: t.Boolean(),
  })
  export type View = typeof view.static

  export const test = t.Object({ to: email('Where the test mail goes') }, { additionalProperties: false })
  export type Test = typeof test.static

  export const tested = t.Object({
    ok: t.Boolean(),
    provider: t.Union([t.Literal('custom'), t.Literal('platform')]),
    response: t.Nullable(t.String({ description: "The server's answer to the mail" })),
    error: t.Nullable(
      t.Object({
        type: t.Union([
          t.Literal('timeout'),
          t.Literal('tls'),
          t.Literal('auth'),
          t.Literal('refused'),
          t.Literal('rejected'),
          t.Literal('blocked'),
          t.Literal('not_configured'),
          t.Literal('other'),
        ]),
        message: t.String(),
      }),
    ),
  })
  export type Tested = typeof tested.static
}
