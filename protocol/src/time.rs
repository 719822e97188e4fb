//! The wire's one time format: RFC 3339 in UTC with microseconds, as in
//! `2026-11-22T03:25:09.123456Z`. Runtime events and audit records carry
//! it; it is computed from the Unix time here because nothing else in the
//! protocol needs a date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// RFC 3339 in UTC with microseconds: `2026-11-22T03:25:09.123456Z`, for
/// audit records and for the runtime events the host emits itself.
/// Computed from the Unix time here, since the crate has no date library
/// and needs none for this one format.
pub fn rfc3339(ts: SystemTime) -> String {
    let micros: i128 = match ts.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_micros() as i128,
        Err(before) => -(before.duration().as_micros() as i128),
    };
    let secs = micros.div_euclid(1_000_000);
    let micro = micros.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{micro:06}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date of a day number (days since 1970-01-01),
/// after Howard Hinnant's `civil_from_days`: shift the year to start on
/// March 1st so the leap day is the year's last, then count 400-year eras.
fn civil_from_days(days: i128) -> (i128, u32, u32) {
    let z = days + 719_468; // days from 0000-03-01
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // day of era, 0..=146096
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // 0..=399
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // day of March-based year
    let mp = (5 * doy + 2) / 153; // month, March = 0
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    let year = yoe + era * 400 + i128::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(secs: u64, micros: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros)
    }

    #[test]
    fn timestamps_are_rfc3339_utc_with_microseconds() {
        let cases = [
            (at(0, 0), "1970-01-01T00:00:00.000000Z"),
            (at(1_795_317_909, 123_456), "2026-11-22T03:25:09.123456Z"),
            // Leap days: a century divisible by 400, and an ordinary year.
            (at(951_782_400, 0), "2000-02-29T00:00:00.000000Z"),
            (at(951_868_800, 1), "2000-03-01T00:00:00.000001Z"),
            (at(1_709_164_800, 999_999), "2024-02-29T00:00:00.999999Z"),
            // 2100 is not a leap year: Feb 28 is followed by Mar 1.
            (at(4_107_542_399, 0), "2100-02-28T23:59:59.000000Z"),
            (at(4_107_542_400, 0), "2100-03-01T00:00:00.000000Z"),
            (at(253_402_300_799, 0), "9999-12-31T23:59:59.000000Z"),
            // Before the epoch, counted backwards.
            (
                UNIX_EPOCH - Duration::from_micros(1),
                "1969-12-31T23:59:59.999999Z",
            ),
            (
                UNIX_EPOCH - Duration::from_secs(2_203_977_600),
                "1900-02-28T00:00:00.000000Z",
            ),
            (
                UNIX_EPOCH - Duration::from_secs(2_203_891_200),
                "1900-03-01T00:00:00.000000Z",
            ),
            (
                UNIX_EPOCH - Duration::from_secs(11_670_998_400),
                "1600-02-29T00:00:00.000000Z",
            ),
        ];
        for (ts, want) in cases {
            assert_eq!(rfc3339(ts), want);
        }
    }

    #[test]
    fn civil_dates_round_trip_over_many_years() {
        // Walk day by day across 1896..2104 and check that the date only
        // ever advances by one day, with the right month lengths.
        let start = -(74 * 365 + 18); // 1896-01-01
        let (mut y, mut m, mut d) = civil_from_days(start);
        assert_eq!((y, m, d), (1896, 1, 1));
        for days in start + 1..start + 208 * 366 {
            let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
            let month_len = match m {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            let next = if d < month_len {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            assert_eq!(civil_from_days(days), next, "day {days}");
            (y, m, d) = next;
        }
    }
}
