# Writes optionpricingv2_greeks.json: the Black-Scholes Greeks of the call
# TestIVFromOptionPricingV2 reads, computed with Python's math module alone
# (not the gateway's Go), from the inputs stated in the file. The inputs are
# the test market's: mark and strike price in put-asset base units (USDC, 6
# decimals), ttl 3600 s, the contracts' time floor(ttl / 864) / 36500 years,
# and ttlToVol(3600) = 60 (%), rate 0. Units as the options chain gives them:
# delta per call asset, gamma per put-asset unit, theta per day (365-day
# year), vega per IV point.
#
#   python3 optionpricingv2_greeks.py > optionpricingv2_greeks.json
import json
import math

inputs = {
    "isCall": True,
    "markPriceRaw": "3001904803",
    "strikePriceRaw": "3035106369",
    "putDecimals": 6,
    "ttl": 3600,
    "yearsToExpiry": (3600 // 864) / 36500,
    "iv": "60",
}
s = int(inputs["markPriceRaw"]) / 10 ** inputs["putDecimals"]
k = int(inputs["strikePriceRaw"]) / 10 ** inputs["putDecimals"]
t = inputs["yearsToExpiry"]
v = int(inputs["iv"]) / 100


def cdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2))


d1 = (math.log(s / k) + v * v / 2 * t) / (v * math.sqrt(t))
pdf = math.exp(-d1 * d1 / 2) / math.sqrt(2 * math.pi)
out = {
    "inputs": inputs,
    "delta": cdf(d1),
    "gamma": pdf / (s * v * math.sqrt(t)),
    "theta": -v * s * pdf / (2 * math.sqrt(t)) / 365,
    "vega": s * math.sqrt(t) * pdf / 100,
}
print(json.dumps(out, indent=2))
