// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { t } from 'elysia'
import { AppError } from './errors'
import { defineForm, formField } from './forms'

const model = t.Object({
  title: t.String({ minLength: 1, maxLength: 5, errorMessage: { minLength: 'Enter a title.' } }),
  tags: t.Array(t.String({ maxLength: 3, errorMessage: { maxLength: 'Keep tags short' } })),
  public: t.Boolean(),
})
const form = defineForm(model, { title: formField.text, tags: formField.lines, public: formField.checkbox })
const body = { title: ' Note ', tags: 'a\n\nbb\n', public: 'on', _csrf: 'ignored' }

describe('defineForm', () => {
  it('hands the service the body as the model reads it', async () => {
    const done = await form.submit(body, (input) => input)
    expect(done).toEqual({ ok: true, result: { title: 'Note', tags: ['a', 'bb'], public: true } })
  })

  it("shows a rule's own message, or TypeBox's when the model gives none", async () => {
    const empty = await form.submit({ ...body, title: '  ' }, () => 'never')
    expect(empty).toMatchObject({ ok: false, errors: { title: 'Enter a title.' } })
    const long = await form.submit({ ...body, title: 'Too long' }, () => 'never')
    expect(long).toMatchObject({ ok: false, errors: { title: 'Expected string length less or equal to 5.' } })
  })

  it('names the line of a list entry, and keeps the values as typed', async () => {
    const done = await form.submit({ ...body, tags: 'a\nlong' }, () => 'never')
    expect(done).toEqual({
      ok: false,
      values: { title: ' Note ', tags: 'a\nlong', public: 'on' },
      errors: { tags: 'Line 2: Keep tags short.' },
    })
  })

  it("puts the service's 422 next to its field", async () => {
    const done = await form.submit(body, () => {
      throw new AppError('TAG_TAKEN', 422, 'That tag is taken', {}, ['body', 'tags', 1])
    })
    expect(done).toMatchObject({ ok: false, errors: { tags: 'Line 2: That tag is taken.' } })
  })

  it('leaves any other error to the caller', async () => {
    const elsewhere = new AppError('ODD', 422, 'Not a field of this form', {}, ['body', 'owner'])
    await expect(form.submit(body, () => Promise.reject(elsewhere))).rejects.toBe(elsewhere)
    const taken = new AppError('BUSY', 409, 'Busy')
    await expect(form.submit(body, () => Promise.reject(taken))).rejects.toBe(taken)
  })
})
