// legs: once — unit test; no store
import { describe, expect, it } from 'bun:test'
import { renderIdentityError } from './errors'

const error = { status: 400, title: 'Refused', message: 'No.', json: { error: 'invalid_request' } }
const typeFor = (accept: string) => renderIdentityError(error, accept).type

describe('an identity error', () => {
  it('is JSON for an OAuth client and a page for a browser, by the preference the Accept header states', () => {
    expect(typeFor('')).toBe('application/json')
    expect(typeFor('*/*')).toBe('application/json')
    expect(typeFor('application/json')).toBe('application/json')
    // Listed first with the same q: JSON wins, though text/html is named too.
    expect(typeFor('application/json, text/html')).toBe('application/json')
    expect(typeFor('text/html;q=0.5, application/json')).toBe('application/json')
    expect(typeFor('text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')).toContain('text/html')
    expect(typeFor('application/json;q=0.2, text/*')).toContain('text/html')
  })

  it('without a JSON form is always the page', () => {
    expect(renderIdentityError({ ...error, json: undefined }, 'application/json').type).toContain('text/html')
  })
})
