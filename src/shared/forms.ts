import type { Static, TObject } from '@sinclair/typebox'
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors'
import { Value } from '@sinclair/typebox/value'
import { AppError } from './errors'

/**
 * Dashboard forms go through the same door as the JSON API: the form body is mapped onto the
 * feature's TypeBox model, checked with the model's own rules, then handed to the service, whose
 * business rules answer 422 with a `loc`. Both kinds of failure land next to their field.
 */

/** How one form control becomes a property of the model. */
export interface FormField {
  read(raw: string): unknown
  /** Introduces an error on the n-th item of the value (a list typed one entry per line). */
  item?: (index: number) => string
}

export const formField = {
  /** A text input, trimmed: names are stored trimmed, so the rules see what would be stored. */
  text: { read: (raw) => raw.trim() },
  /** A select; nothing chosen leaves the property out, and the model's default applies. */
  choice: { read: (raw) => raw || undefined },
  /** A textarea with one entry per line; blank lines do not count. */
  lines: {
    read: (raw) =>
      raw
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter(Boolean),
    item: (index) => `Line ${index + 1}: `,
  },
  /** A whole number typed in a text field; anything else is kept as typed, for the model to refuse. */
  integer: { read: (raw) => (/^\s*-?\d{1,9}\s*$/.test(raw) ? Number(raw) : raw.trim()) },
  /** A checkbox is sent only when ticked. */
  checkbox: { read: (raw) => raw === 'true' || raw === 'on' },
} satisfies Record<string, FormField>

/**
 * The person's message for a rule, from the schema that holds it: `errorMessage: { maxItems: … }`
 * (the keyword and shape of ajv-errors). A rule without one keeps TypeBox's message.
 */
const KEYWORDS: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.StringMinLength]: 'minLength',
  [ValueErrorType.StringMaxLength]: 'maxLength',
  [ValueErrorType.StringPattern]: 'pattern',
  [ValueErrorType.StringFormat]: 'format',
  [ValueErrorType.ArrayMinItems]: 'minItems',
  [ValueErrorType.ArrayMaxItems]: 'maxItems',
  [ValueErrorType.Union]: 'anyOf',
  [ValueErrorType.Integer]: 'type',
  [ValueErrorType.Object]: 'type',
  [ValueErrorType.IntegerMinimum]: 'minimum',
  [ValueErrorType.IntegerMaximum]: 'maximum',
}

const ruleMessage = (error: ValueError): string => {
  const keyword = KEYWORDS[error.type]
  const messages = error.schema.errorMessage as Record<string, string> | undefined
  return (keyword && messages?.[keyword]) || error.message
}

/** Shown as a sentence next to the field, whatever punctuation the rule's message has. */
const sentence = (message: string) => (/[.!?]$/.test(message) ? message : `${message}.`)

/** A form field as sent, to show again beside a refusal; '' when absent or not text. */
export const sentText = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name]
  return typeof value === 'string' ? value : ''
}

export type FormValues<K extends string> = Record<K, string>
export type FieldErrors<K extends string> = Partial<Record<K, string>>
/** What a form is drawn with: empty, or the values as typed and the errors of a refusal. */
export type FormState<K extends string> = { values?: FormValues<K>; errors?: FieldErrors<K> }

type FormResult<K extends string, R> =
  | { ok: true; result: R }
  | { ok: false; values: FormValues<K>; errors: FieldErrors<K> }

/** A form over a model: one FormField per property of the model. */
export function defineForm<S extends TObject>(
  model: S,
  fields: { [K in keyof Static<S> & string]-?: FormField },
) {
  type Key = keyof Static<S> & string
  const names = Object.keys(fields) as Key[]

  /** Puts a problem next to its field; the first problem of a field wins. */
  const place = (errors: FieldErrors<Key>, name: Key, index: unknown, message: string) => {
    const item = typeof index === 'number' ? fields[name].item?.(index) : undefined
    errors[name] ??= sentence(`${item ?? ''}${message}`)
  }

  return {
    /**
     * Reads the body, checks it against the model, then runs `action` (the service call) on the
     * valid input. A 422 from either becomes field errors, with the values as typed to show again;
     * any other error is the caller's.
     */
    async submit<R>(
      body: unknown,
      action: (input: Static<S>) => R | Promise<R>,
    ): Promise<FormResult<Key, R>> {
      const sent = (body ?? {}) as Record<string, unknown>
      const values = {} as FormValues<Key>
      const input: Record<string, unknown> = {}
      for (const name of names) {
        const raw = sent[name]
        values[name] = typeof raw === 'string' ? raw : ''
        const value = fields[name].read(values[name])
        if (value !== undefined) input[name] = value
      }
      const errors: FieldErrors<Key> = {}
      for (const error of Value.Errors(model, input)) {
        const [field, index] = error.path.split('/').slice(1)
        // Every property of the model is a form field: the type of `fields` says so.
        place(errors, field as Key, index === undefined ? undefined : Number(index), ruleMessage(error))
      }
      if (Object.keys(errors).length) return { ok: false, values, errors }
      try {
        return { ok: true, result: await action(input as Static<S>) }
      } catch (e) {
        // Business rules answer 422 at ['body', field, index?], as they do for the JSON API.
        if (!(e instanceof AppError) || e.status !== 422) throw e
        const [where, field, index] = e.loc
        if (where !== 'body' || !names.includes(field as Key)) throw e
        place(errors, field as Key, index, e.message)
        return { ok: false, values, errors }
      }
    },
  }
}
