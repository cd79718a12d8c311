import { Alert, Layout } from '../../shared/views/hosted-layout'
import { PASSWORD_MIN } from '../accounts'

/** A password being chosen (sign-up, reset), with the rule the server enforces. */
export function NewPasswordField({ label }: { label: string }) {
  return (
    <>
      <label for="password" safe>
        {label}
      </label>
      <input
        id="password"
        name="password"
        type="password"
        required
        minlength={String(PASSWORD_MIN)}
        autocomplete="new-password"
      />
      <p class="hint">{`At least ${PASSWORD_MIN} characters.`}</p>
    </>
  )
}

/** The end of a flow that went well (verified, changed, connected, signed out). */
export function DonePage(p: { title: string; message: string }) {
  return (
    <Layout title={p.title}>
      <h1 safe>{p.title}</h1>
      <Alert kind="ok" message={p.message} />
    </Layout>
  )
}

/** The email field of the sign-in, sign-up and reset forms (`autocomplete` tells password managers which). */
export function EmailField(p: { autocomplete: 'username' | 'email'; autofocus?: boolean; value?: string }) {
  return (
    <>
      <label for="email">Email</label>
      <input
        id="email"
        name="email"
        type="email"
        required
        autofocus={p.autofocus}
        autocomplete={p.autocomplete}
        value={p.value}
      />
    </>
  )
}
