import { defineErrorCodes } from '../../shared/errors'

/** What a workspace's branding refuses. */
export const BrandingErrors = defineErrorCodes({
  URL_REFUSED: 'Use an https URL',
  LOGO_TOO_LARGE: 'The logo is larger than 1 MiB',
  LOGO_EMPTY: 'The logo file is empty',
  LOGO_TYPE: 'The logo must be a PNG, JPEG, WebP or SVG image (the file’s content decides, not its name)',
  SVG_UNSAFE: 'This SVG cannot be used',
  WORKSPACE_DELETING: 'This workspace is being deleted',
})
