// SPDX-License-Identifier: MIT
pragma solidity 0.8.26;

/// @notice Reads what an option market would charge, inside one eth_call at
/// one block, from the market's and its pricing contract's own functions.
/// Never deployed: the gateway sends the creation code with its constructor
/// arguments as an eth_call without `to`, from the buyer when it has one (a
/// pricing contract may read tx.origin, as OptionPricingLinearV2_1 reads
/// its xSYK balance), and the node returns what the constructor returns.
///
/// For each ask (side, strike tick, ttl, collateral total) it reads, as
/// mintOption would at this block: the strike (getPricePerCallAssetViaTick
/// on the prime pool), the pricing contract's ttlToVol(ttl) and the IV it
/// prices the strike at from its own volatility function, whichever it has:
/// OptionPricingLinearV2_1's getVolatility(strike, lastPrice, ttlToVol,
/// ttl), else OptionPricingLinearV2's getVolatility(strike, lastPrice,
/// ttlToVol), else, for a pricing with neither that answers
/// OptionPricingV2's volatilityCap() (OptionPricingV2 prices at the ttl's
/// table IV and has no volatility function), ttlToVol itself; the option price per call-asset unit getOptionPrice(isPut,
/// block.timestamp + ttl, strike, lastPrice); and for a total above 0 the
/// market's getPremiumAmount(isPut, expiry, strike, lastPrice, amount) with
/// amount as mintOption computes it, then the protocol fee as mintOption
/// charges it: getFee(total, premium) when the market's feeTo() is set, and
/// none (getFee not asked) when it is zero. A call that fails leaves its
/// flag unset and keeps its revert data. It also reads the user's balance
/// and allowance to the market of both assets. What a
/// constructor returns is bounded by the 24 KiB code size limit (EIP-170,
/// enforced in eth_call too): 48 asks (with their revert data) fit in one read.
contract PricingRead {
    struct Ask {
        bool isPut;
        int24 strikeTick;
        uint256 ttl;
        uint256 total;
    }

    /// @dev Compact, for the 24 KiB a constructor may return (EIP-170):
    /// flags bit 0 ttlToVol answered, 1 getVolatility (4 arguments)
    /// answered, 2 getOptionPrice answered, 3 getPremiumAmount answered, 4
    /// the fee is known (getFee answered, or none is charged), 5
    /// getVolatility (3 arguments) answered, 6 no fee is charged (feeTo is
    /// zero), 7 neither getVolatility answered but volatilityCap() did:
    /// OptionPricingV2, priced at ttlToVol (vol is baseVol); err is getOptionPrice's revert data when it failed, else
    /// getPremiumAmount's.
    struct Answer {
        uint256 strike;
        uint256 flags;
        uint256 baseVol;
        uint256 vol;
        uint256 optionPrice;
        uint256 premium;
        uint256 fee;
        bytes err;
    }

    struct Head {
        uint256 blockNumber;
        uint256 timestamp;
        address pool;
        uint256 lastPrice;
        address pricing;
        uint256 putDecimals;
        address callAsset;
        address putAsset;
        uint256[4] account; // call allowance, call balance, put allowance, put balance
        address feeTo;
        bool feeToRead; // feeTo() answered a word
    }

    constructor(address market, address user, Ask[] memory asks) {
        Head memory h;
        h.blockNumber = _blockNumber();
        h.timestamp = block.timestamp;
        h.pool = address(uint160(_word(market, abi.encodeWithSignature("primePool()"), true)));
        h.lastPrice = _word(market, abi.encodeWithSignature("getCurrentPricePerCallAsset(address)", h.pool), true);
        h.pricing = address(uint160(_word(market, abi.encodeWithSignature("optionPricing()"), false)));
        h.putDecimals = _word(market, abi.encodeWithSignature("putAssetDecimals()"), true);
        h.callAsset = address(uint160(_word(market, abi.encodeWithSignature("callAsset()"), true)));
        h.putAsset = address(uint160(_word(market, abi.encodeWithSignature("putAsset()"), true)));
        uint256 feeTo;
        (h.feeToRead, feeTo,) = _try(market, abi.encodeWithSignature("feeTo()"));
        h.feeTo = address(uint160(feeTo));
        if (user != address(0)) {
            h.account[0] = _word(h.callAsset, abi.encodeWithSignature("allowance(address,address)", user, market), false);
            h.account[1] = _word(h.callAsset, abi.encodeWithSignature("balanceOf(address)", user), false);
            h.account[2] = _word(h.putAsset, abi.encodeWithSignature("allowance(address,address)", user, market), false);
            h.account[3] = _word(h.putAsset, abi.encodeWithSignature("balanceOf(address)", user), false);
        }
        Answer[] memory out = new Answer[](asks.length);
        for (uint256 i = 0; i < asks.length; i++) {
            out[i] = _answer(market, h, asks[i]);
        }
        bytes memory ret = abi.encode(h, out);
        assembly {
            return(add(ret, 32), mload(ret))
        }
    }

    function _answer(address market, Head memory h, Ask memory a) private view returns (Answer memory r) {
        r.strike = _word(market, abi.encodeWithSignature("getPricePerCallAssetViaTick(address,int24)", h.pool, a.strikeTick), true);
        bool ok;
        bytes memory err;
        if (h.pricing != address(0)) {
            (ok, r.baseVol,) = _try(h.pricing, abi.encodeWithSignature("ttlToVol(uint256)", a.ttl));
            if (ok) {
                r.flags |= 1;
                (ok, r.vol,) = _try(
                    h.pricing,
                    abi.encodeWithSignature("getVolatility(uint256,uint256,uint256,uint256)", r.strike, h.lastPrice, r.baseVol, a.ttl)
                );
                if (ok) {
                    r.flags |= 2;
                } else {
                    (ok, r.vol,) = _try(
                        h.pricing,
                        abi.encodeWithSignature("getVolatility(uint256,uint256,uint256)", r.strike, h.lastPrice, r.baseVol)
                    );
                    if (ok) {
                        r.flags |= 32;
                    } else if (_answers(h.pricing, abi.encodeWithSignature("volatilityCap()"))) {
                        // OptionPricingV2: a ttl table and a volatility
                        // cap, no volatility function; getOptionPrice
                        // prices at ttlToVol(expiry - block.timestamp).
                        r.flags |= 128;
                        r.vol = r.baseVol;
                    }
                }
            }
            (ok, r.optionPrice, err) = _try(
                h.pricing,
                abi.encodeWithSignature("getOptionPrice(bool,uint256,uint256,uint256)", a.isPut, block.timestamp + a.ttl, r.strike, h.lastPrice)
            );
            if (ok) r.flags |= 4;
            else r.err = err;
        }
        if (a.total == 0 || r.strike == 0) return r;
        uint256 amount = a.isPut ? (a.total * (10 ** h.putDecimals)) / r.strike : a.total;
        (ok, r.premium, err) = _try(
            market,
            abi.encodeWithSignature(
                "getPremiumAmount(bool,uint256,uint256,uint256,uint256)", a.isPut, block.timestamp + a.ttl, r.strike, h.lastPrice, amount
            )
        );
        if (!ok) {
            r.err = err;
            return r;
        }
        r.flags |= 8;
        if (h.feeToRead && h.feeTo == address(0)) {
            r.flags |= 16 | 64; // mintOption charges a fee only when feeTo is set
            return r;
        }
        (ok, r.fee,) = _try(market, abi.encodeWithSignature("getFee(uint256,uint256)", a.total, r.premium));
        if (ok) r.flags |= 16;
    }

    /// @dev The chain's own number of this block, the one its headers carry
    /// (the gateway checks the read ran at the block it asked): ArbSys's
    /// arbBlockNumber on Arbitrum, where block.number is an estimate of
    /// Ethereum's; block.number elsewhere, where 0x64 holds no code and the
    /// call returns no data.
    function _blockNumber() private view returns (uint256) {
        (bool ok, uint256 n,) = _try(address(0x64), abi.encodeWithSignature("arbBlockNumber()"));
        return ok ? n : block.number;
    }

    /// @dev The first word a static call returns; a failure reverts this
    /// read when required, else gives 0.
    function _word(address target, bytes memory data, bool required) private view returns (uint256 v) {
        bool ok;
        (ok, v,) = _try(target, data);
        if (!ok && required) revert("PricingRead: a required read failed");
    }

    /// @dev Whether a static call answers at least a word.
    function _answers(address target, bytes memory data) private view returns (bool ok) {
        (ok,,) = _try(target, data);
    }

    function _try(address target, bytes memory data) private view returns (bool ok, uint256 v, bytes memory ret) {
        (ok, ret) = target.staticcall(data);
        if (ok && ret.length >= 32) {
            v = abi.decode(ret, (uint256));
            return (true, v, "");
        }
        return (false, 0, ret);
    }
}
