// ethereum.call: balanceOf(owner) asked of the contract that logged the
// event Thing(uint256 count, int256 amount, address owner, bool flag),
// owner its third parameter; the answer, or its revert, written as
// Answer "a".
import { Entity, Value, ethereum, store } from '@graphprotocol/graph-ts';

function balanceOf(event: ethereum.Event, contract: string, signature: string): void {
  let owner = event.parameters[2].value.toAddress();
  let call = new ethereum.SmartContractCall(contract, event.address, 'balanceOf', signature, [ethereum.Value.fromAddress(owner)]);
  let answer = ethereum.call(call);
  let e = new Entity();
  e.set('id', Value.fromString('a'));
  e.set('reverted', Value.fromBoolean(answer == null));
  if (answer != null) {
    e.set('balance', Value.fromBigInt(answer[0].toBigInt()));
  }
  store.set('Answer', 'a', e);
}

export function handleBalance(event: ethereum.Event): void {
  balanceOf(event, 'Token', 'balanceOf(address):(uint256)');
}

// handleWrongSignature names outputs the ABI's balanceOf does not have.
export function handleWrongSignature(event: ethereum.Event): void {
  balanceOf(event, 'Token', 'balanceOf(address):(uint128)');
}

// handleUnlistedABI names an ABI the data source does not list.
export function handleUnlistedABI(event: ethereum.Event): void {
  balanceOf(event, 'Unlisted', 'balanceOf(address):(uint256)');
}
