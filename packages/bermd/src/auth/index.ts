export { ANONYMOUS, OPERATOR, OPERATOR_NAME, Principal } from './principal.js';
export {
  AccessFileError,
  newToken,
  parseAccess,
  PRINCIPAL_NAME,
  readAccessFile,
  tokenSha256,
  writeAccessFile,
  type AccessEntry,
} from './access-file.js';
export { StaticPrincipals, type AccessChange } from './static-principals.js';
export {
  Authentication,
  bearerOf,
  type Authenticated,
  type AuthenticationOptions,
  type TokenRefusal,
  type TokenVerifier,
} from './authentication.js';
