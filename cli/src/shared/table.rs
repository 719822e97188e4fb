//! Rows printed as aligned columns (`check`, `call --stats`, `demo`,
//! `trust`), every cell made safe to print first.

use super::term::sanitize as safe;

/// Prints rows as aligned columns, the first row as the header.
pub fn print_table<const N: usize>(rows: &[[String; N]]) {
    for line in table_lines(rows) {
        outln!("{line}");
    }
}

/// Rows as aligned column lines, the first row as the header. Cells are
/// sanitized (a hook's name, URL, `observes` or error may carry escape
/// sequences), then aligned.
pub fn table_lines<const N: usize>(rows: &[[String; N]]) -> Vec<String> {
    let rows: Vec<[String; N]> = rows
        .iter()
        .map(|row| row.clone().map(|cell| safe(&cell).into_owned()))
        .collect();
    let mut widths = [0usize; N];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(widths)
                .map(|(cell, w)| format!("{cell:<w$}"))
                .collect();
            cells.join("  ").trim_end().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hook's `observes` or error printed raw could clear the screen or
    /// retitle the terminal: every cell is shown with visible escapes.
    #[test]
    fn table_cells_show_escape_sequences_as_text() {
        let rows = [
            ["hook".to_string(), "observes".to_string()],
            ["h".to_string(), "\x1b[2J\x1b]0;pwned\x07".to_string()],
        ];
        let lines = table_lines(&rows);
        assert!(
            lines
                .iter()
                .all(|l| !l.contains('\x1b') && !l.contains('\x07'))
        );
        assert!(lines[1].contains("\\u{1b}[2J"), "{}", lines[1]);
    }
}
