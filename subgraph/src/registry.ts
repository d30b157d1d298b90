// Lookups in the registry the manifests were written from (known.ts,
// generated from networks.json): what this network's manifest indexes
// statically, and the slot0 layout of a handler's DEX. Rows count only on
// their own network, dataSource.network(): one address can be different
// contracts on two chains.
import { Address, dataSource } from '@graphprotocol/graph-ts';
import { KNOWN_ADDRESSES, KNOWN_KINDS, KNOWN_NETWORKS, KNOWN_SLOT0, NETWORKS, NETWORK_SLOT0 } from './known';


function knownRow(address: Address): i32 {
  const network = dataSource.network();
  const a = address.toHexString();
  for (let i = 0; i < KNOWN_ADDRESSES.length; i++) {
    if (KNOWN_ADDRESSES[i] == a && KNOWN_NETWORKS[i] == network) return i;
  }
  return -1;
}

// The kind the manifest gives a statically indexed address, or ''.
export function knownKind(address: Address): string {
  const i = knownRow(address);
  return i < 0 ? '' : KNOWN_KINDS[i];
}

// The slot0 layout of the pools a handler serves: its DEX's, from the
// registry; for a handler the registry does not list (one discovered from
// a position manager's whitelist), the layout every handler of this network
// shares; '' when they differ, which leaves the pool's DEX unknown.
export function handlerSlot0(handler: Address): string {
  const i = knownRow(handler);
  return i >= 0 ? KNOWN_SLOT0[i] : networkSlot0();
}

// The layout every listed handler of this network shares, '' when they differ.
export function networkSlot0(): string {
  const i = NETWORKS.indexOf(dataSource.network());
  return i < 0 ? '' : NETWORK_SLOT0[i];
}
