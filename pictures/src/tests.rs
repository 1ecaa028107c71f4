//! The pictures drawn from text forms: every game has its palette, notes
//! are not rows, each game's pieces are where its text puts them.

use super::*;

#[test]
fn every_game_has_its_palette() {
    use pregen_games::GameKind;
    use pregen_games::synthetic::Synthetic;
    for game in GameKind::all() {
        let drawn = PALETTES.iter().any(|(name, _)| *name == game.name());
        assert!(
            drawn || game.name() == Synthetic::NAME,
            "{} has no palette",
            game.name()
        );
    }
}

fn tiles(svg: &str, what: &str) -> usize {
    svg.matches(what).count()
}

#[test]
fn notes_are_not_rows() {
    for note in [
        "gate 1,2 ^",
        "karma_goal 7 difficulty 5",
        "rooms 4 colours 2 required 1",
        "door 3 9,4 1>5",
        "start 27 exit 2",
    ] {
        assert!(is_note(note), "{note}");
    }
    for row in [
        "########",
        "   k##",
        "ks#M#k##k",
        "#  $.#",
        "#.$+  #",
        "^^AA000",
    ] {
        assert!(!is_note(row), "{row}");
    }
}

#[test]
fn a_sokoban_level_is_drawn_with_its_pieces_and_no_floor_outside() {
    let svg = level_svg("sokoban", "  ####\n###  #\n#@$ .#\n######\n", "t", 1.0);
    assert_eq!(tiles(&svg, "<circle"), 1, "the player");
    assert_eq!(tiles(&svg, "<path"), 1, "the goal");
    assert_eq!(tiles(&svg, "rx=\"2\""), 1, "the box");
    // The two spaces at the top left are outside: no rectangle covers x=0, y=0.
    assert!(!svg.contains("<rect x=\"0\" y=\"0\""), "{svg}");
    assert!(svg.contains("viewBox=\"0 0 144 96\""), "{svg}");
}

#[test]
fn a_tilt_level_draws_fruit_pieces_and_gates() {
    let svg = level_svg("tilt", "#####\n#1.2#\n#H.^#\n#####\ngate 1,1 >\n", "t", 1.0);
    assert_eq!(tiles(&svg, "<circle"), 3, "two fruit and a hedgehog");
    assert!(svg.contains("<g transform=\"rotate(90"), "the gate: {svg}");
    assert!(svg.contains(">1</text>") && svg.contains(">2</text>"));
}

#[test]
fn the_cube_is_drawn_as_its_net() {
    let layout = "   k##\n   ###\n   #.#\nks#M#k##k\n#k.k#ks##\n##k###s##\n   #k#\n   ##k\n   ###\n   s##\n   ###\n   #k#\nkarma_goal 7 difficulty 5\n";
    let svg = level_svg("cube", layout, "t", 1.0);
    for face in ['B', 'L', 'T', 'R', 'F', 'D'] {
        assert!(svg.contains(&format!(">{face}</text>")), "face {face}");
    }
    assert!(svg.contains(">M</text>"), "the monk");
}

#[test]
fn titles_are_escaped() {
    let svg = level_svg("tilt", "###\n", "a <b> & c", 1.0);
    assert!(svg.contains("a &lt;b&gt; &amp; c"));
}
