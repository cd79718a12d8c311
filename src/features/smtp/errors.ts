import { defineErrorCodes } from '../../shared/errors'

/** What a workspace's SMTP settings refuse. */
export const SmtpErrors = defineErrorCodes({
  HOST_REFUSED: 'This host cannot be used as a mail server',
  CHANGED_MEANWHILE: 'The SMTP settings were changed meanwhile: try again',
  WORKSPACE_DELETING: 'This workspace is being deleted',
  TEST_RECIPIENT_REFUSED:
    "Through the platform's mail server a test mail goes only to your own verified address. Set up this workspace's own server to test any address.",
})
