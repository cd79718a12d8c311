// Every scenario of `npm run bench -- <scenario>`, by name.
import type { Scenario } from '../scenario'
import alternate from './alternate'
import { appsListLimiter, appsListScenario, scopedReadMachineVsSession } from './apps-list'
import cachedAnswerFloor from './cached-answer-floor'
import { clientCredentials, clientCredentialsPostgres } from './client-credentials'
import { discovery, jwks } from './discovery'
import fuzz from './fuzz'
import healthz from './healthz'
import jobClaims from './job-claims'
import machineKeyExchange from './machine-key-exchange'
import mcpConnect from './mcp-connect'
import { memory, memoryPostgres } from './memory'
import memoryStores from './memory-stores'
import provisioning from './provisioning'
import { signIn, signInMetering } from './sign-in'
import tenantsBatch from './tenants-batch'
import webhookDeliveries from './webhook-deliveries'

export const SCENARIOS: Record<string, Scenario> = {
  healthz,
  'apps-list': appsListScenario,
  'apps-list-limiter': appsListLimiter,
  'scoped-read-machine-vs-session': scopedReadMachineVsSession,
  discovery,
  jwks,
  'client-credentials': clientCredentials,
  'client-credentials-postgres': clientCredentialsPostgres,
  'sign-in': signIn,
  'sign-in-metering': signInMetering,
  'machine-key-exchange': machineKeyExchange,
  memory,
  'memory-postgres': memoryPostgres,
  'memory-stores': memoryStores,
  provisioning,
  'tenants-batch': tenantsBatch,
  'webhook-deliveries': webhookDeliveries,
  'job-claims': jobClaims,
  'mcp-connect': mcpConnect,
  fuzz,
  alternate,
  'cached-answer-floor': cachedAnswerFloor,
}
