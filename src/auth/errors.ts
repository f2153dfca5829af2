/** The auth store's refusals; the HTTP layer maps each code to an API error (server/known-errors.ts). */
export type AuthErrorCode =
  | 'USER_NOT_FOUND' // no member with that id
  | 'NO_FREE_SEAT' // every seat of the license (or of an unlicensed instance) is taken
  | 'EMAIL_TAKEN' // a member already has that email
  | 'LAST_OWNER' // removing (or demoting) the last owner
  | 'WEAK_PASSWORD' // a password too short or too long to set
  | 'IDENTITY_TAKEN'; // binding a member, or a single sign-on account, that is bound already

export class AuthError extends Error {
  constructor(
    readonly code: AuthErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'AuthError';
  }
}
