// bigInt.plus, minus, times, dividedBy and mod on the event
// Pair(int256 a, int256 b): the results written as Sums "r".
import { Entity, Value, ethereum, store } from '@graphprotocol/graph-ts';

export function handlePair(event: ethereum.Event): void {
  let a = event.parameters[0].value.toBigInt();
  let b = event.parameters[1].value.toBigInt();
  let e = new Entity();
  e.set('id', Value.fromString('r'));
  e.set('plus', Value.fromBigInt(a.plus(b)));
  e.set('minus', Value.fromBigInt(a.minus(b)));
  e.set('times', Value.fromBigInt(a.times(b)));
  e.set('quotient', Value.fromBigInt(a.div(b)));
  e.set('remainder', Value.fromBigInt(a.mod(b)));
  store.set('Sums', 'r', e);
}
