/** What a host's lister is given: the connection, its token, a fetch bound to the API's origin, the listing to fill. */
import type { ConnectionConfig } from '../../config/connections.js';
import type { HostFetch } from '../host-fetch.js';
import type { Listing } from '../listing.js';

export interface HostListing {
  connection: ConnectionConfig;
  token: string | undefined;
  fetch: HostFetch;
  listing: Listing;
}
