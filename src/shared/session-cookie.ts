/**
 * The dashboard session cookie's name. `__Host-` binds it to this origin (Secure, Path=/, no
 * Domain) when served over https. Shared: the auth feature sets it, the API document declares it.
 */
export const sessionCookieFor = (baseUrl: string) =>
  baseUrl.startsWith('https:') ? '__Host-gh_session' : 'gh_session'
