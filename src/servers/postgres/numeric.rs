//! PostgreSQL's NUMERIC in its binary form (`numeric_send`/`numeric_recv`): a decimal of
//! fixed hundredths written for a parameter, and any NUMERIC read back as its text, so that
//! money stays exact without a decimal crate.

use std::error::Error;

use bytes::BytesMut;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};

use crate::servers::sql::Cell;

/// The sign word of a negative number, and of NaN.
const NEG: u16 = 0x4000;
const NAN: u16 = 0xC000;
/// Each digit word holds four decimal digits.
const BASE: i64 = 10_000;

/// `hundredths / 100` as NUMERIC with two decimal places.
pub(crate) fn encode_hundredths(hundredths: i64, out: &mut Vec<u8>) {
    let sign = if hundredths < 0 { NEG } else { 0 };
    let abs = hundredths.unsigned_abs() as i64;
    let (int, frac) = (abs / 100, abs % 100);
    let mut groups = Vec::new();
    let mut rest = int;
    while rest > 0 {
        groups.push((rest % BASE) as i16);
        rest /= BASE;
    }
    groups.reverse();
    // The integer part's groups sit at weights len-1 .. 0; the fraction's one group at -1.
    let mut weight = groups.len() as i16 - 1;
    groups.push((frac * 100) as i16);
    while groups.last() == Some(&0) {
        groups.pop();
    }
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    if groups.is_empty() {
        weight = 0;
    }
    out.extend_from_slice(&(groups.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&2u16.to_be_bytes());
    for g in groups {
        out.extend_from_slice(&g.to_be_bytes());
    }
}

/// A NUMERIC's text, with as many decimal places as its scale (`-12.50`, `NaN`).
pub(crate) fn decode_text(raw: &[u8]) -> Result<String, String> {
    let word = |i: usize| -> Result<i16, String> {
        raw.get(i * 2..i * 2 + 2)
            .map(|b| i16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "a NUMERIC value cut short".to_string())
    };
    let (n, weight, sign, scale) = (word(0)?, word(1)?, word(2)? as u16, word(3)? as u16);
    if sign == NAN {
        return Ok("NaN".into());
    }
    let digit = |i: i32| -> Result<i16, String> {
        if (0..n as i32).contains(&i) {
            word(4 + i as usize)
        } else {
            Ok(0)
        }
    };
    let mut s = String::new();
    if sign == NEG {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    }
    for p in (0..=weight as i32).rev() {
        let d = digit(weight as i32 - p)?;
        if p == weight as i32 {
            s.push_str(&d.to_string());
        } else {
            s.push_str(&format!("{d:04}"));
        }
    }
    if scale > 0 {
        let mut frac = String::new();
        let mut p = -1;
        while frac.len() < scale as usize {
            frac.push_str(&format!("{:04}", digit(weight as i32 - p)?));
            p -= 1;
        }
        frac.truncate(scale as usize);
        s.push('.');
        s.push_str(&frac);
    }
    Ok(s)
}

/// A parameter of two decimal places, in hundredths, sent as NUMERIC.
#[derive(Debug)]
pub(crate) struct Hundredths(pub(crate) i64);

impl ToSql for Hundredths {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        let mut bytes = Vec::with_capacity(16);
        encode_hundredths(self.0, &mut bytes);
        out.extend_from_slice(&bytes);
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }

    to_sql_checked!();
}

/// A column read back: integers, NUMERIC and strings decoded, any other type (a timestamp)
/// left as `Other`.
impl<'a> FromSql<'a> for Cell {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Cell, Box<dyn Error + Sync + Send>> {
        Ok(match *ty {
            Type::INT2 => Cell::Int(i16::from_sql(ty, raw)?.into()),
            Type::INT4 => Cell::Int(i32::from_sql(ty, raw)?.into()),
            Type::INT8 => Cell::Int(i64::from_sql(ty, raw)?),
            Type::NUMERIC => Cell::Text(decode_text(raw)?),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME => {
                Cell::Text(String::from_sql(ty, raw)?)
            }
            _ => Cell::Other,
        })
    }

    fn from_sql_null(_: &Type) -> Result<Cell, Box<dyn Error + Sync + Send>> {
        Ok(Cell::Null)
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(h: i64) -> String {
        let mut b = Vec::new();
        encode_hundredths(h, &mut b);
        decode_text(&b).unwrap()
    }

    #[test]
    fn hundredths_survive_the_binary_form() {
        for (h, text) in [
            (0, "0.00"),
            (1, "0.01"),
            (10, "0.10"),
            (100, "1.00"),
            (123_456, "1234.56"),
            (1_000_000, "10000.00"),
            (-1000, "-10.00"),
            (30_000_000, "300000.00"),
            (999_999_999_999, "9999999999.99"),
            (10_000_000_000, "100000000.00"),
        ] {
            assert_eq!(round_trip(h), text, "{h}");
        }
    }

    #[test]
    fn postgres_own_bytes_read_as_text() {
        // SELECT 1234.5678::numeric(8,4), as numeric_send writes it: 2 digits, weight 0,
        // sign 0, scale 4, [1234, 5678].
        let raw = [0, 2, 0, 0, 0, 0, 0, 4, 0x04, 0xD2, 0x16, 0x2E];
        assert_eq!(decode_text(&raw).unwrap(), "1234.5678");
        // 0.0500::numeric(4,4): 1 digit, weight -1, [500].
        let raw = [0, 1, 0xFF, 0xFF, 0, 0, 0, 4, 0x01, 0xF4];
        assert_eq!(decode_text(&raw).unwrap(), "0.0500");
        // 20000: 1 digit, weight 1, [2], scale 0.
        let raw = [0, 1, 0, 1, 0, 0, 0, 0, 0, 2];
        assert_eq!(decode_text(&raw).unwrap(), "20000");
        assert!(decode_text(&[0, 1]).is_err());
    }
}
