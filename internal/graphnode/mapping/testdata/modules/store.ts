// store.set, store.get and store.remove, one handler each, on the schema
// beside this file (schema.graphql). Every value comes from the event
// Thing(uint256 count, int256 amount, address owner, bool flag) or is a
// literal, so a test states what each write must hold.
import { BigInt, Entity, Value, ethereum, store } from '@graphprotocol/graph-ts';

// handleSet writes Thing "a": every kind of value the schema has.
export function handleSet(event: ethereum.Event): void {
  let p = event.parameters;
  let e = new Entity();
  e.set('id', Value.fromString('a'));
  e.set('name', Value.fromString('thing €'));
  e.set('count', Value.fromI32(p[0].value.toBigInt().toI32()));
  e.set('amount', Value.fromBigInt(p[1].value.toBigInt()));
  e.set('owner', Value.fromBytes(p[2].value.toAddress()));
  e.set('flag', Value.fromBoolean(p[3].value.toBoolean()));
  e.set('amounts', Value.fromBigIntArray([p[1].value.toBigInt(), BigInt.fromI32(-1)]));
  store.set('Thing', 'a', e);
}

// handleGet reads Thing "a" and Thing "missing" and writes a Copy of each:
// found or not, and what it read (count plus one, the name, the owner,
// the amounts).
export function handleGet(event: ethereum.Event): void {
  copy('a');
  copy('missing');
}

function copy(id: string): void {
  let read = store.get('Thing', id);
  let c = new Entity();
  c.set('id', Value.fromString(id));
  c.set('found', Value.fromBoolean(read != null));
  if (read != null) {
    c.set('count', Value.fromI32(read.getI32('count') + 1));
    c.set('name', Value.fromString(read.getString('name')));
    c.set('owner', Value.fromBytes(read.getBytes('owner')));
    c.set('amounts', read.get('amounts')!);
  }
  store.set('Copy', id, c);
}

// handleRemove removes Thing "a".
export function handleRemove(event: ethereum.Event): void {
  store.remove('Thing', 'a');
}

// handleSetUnknown writes an entity type the schema lacks.
export function handleSetUnknown(event: ethereum.Event): void {
  let e = new Entity();
  e.set('id', Value.fromString('x'));
  store.set('Nope', 'x', e);
}
