import Stripe from 'stripe'
import { type StripeSettings, VERSION } from '../../config'
import type { Core } from '../../core'
import { appError } from '../../shared/errors'
import { BillingErrors } from './errors'

export type { Stripe }

const clients = new WeakMap<StripeSettings, Stripe>()

/**
 * The official SDK for the configured account, one per settings object (so per thread). It talks to
 * `STRIPE_API_HOST` (Stripe's API unless told: the tests' stand-in is an http origin on loopback).
 */
export function stripeClient(settings: StripeSettings): Stripe {
  let client = clients.get(settings)
  if (!client) {
    client = new Stripe(settings.secretKey, {
      host: settings.api.host,
      port: settings.api.port,
      protocol: settings.api.protocol,
      maxNetworkRetries: 2,
      timeout: 10_000,
      telemetry: false,
      appInfo: { name: 'Gatehouse', version: VERSION },
    })
    clients.set(settings, client)
  }
  return client
}

/**
 * A call to Stripe whose failure the caller sees as a 502 with a plain message. What Stripe said
 * is logged by type and code only: its messages may quote what was sent, and never the key.
 */
export async function callStripe<T>(core: Core, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (e) {
    const err = e as { type?: string; code?: string; statusCode?: number }
    core.log.warn('stripe call failed', {
      call: what,
      type: err.type ?? 'unknown',
      code: err.code ?? null,
      status: err.statusCode ?? null,
    })
    throw appError(BillingErrors.PROVIDER_FAILED, 502)
  }
}

/** An expandable field's id, whether Stripe sent the id or the object. */
export const idOf = (field: string | { id: string } | null | undefined): string | null =>
  field == null ? null : typeof field === 'string' ? field : field.id
