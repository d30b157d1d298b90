package graphnode

// DamageForTest lets the external tests damage an entity's encoding.
var DamageForTest = damage
