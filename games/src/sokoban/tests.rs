use super::level::{Level, parse_collection, print_collection};
use crate::GameError;

const SMALL: &str = "\
#####
#@$.#
#####
";

#[test]
fn xsb_round_trips_and_a_push_solves() {
    let level = Level::from_xsb(SMALL).expect("parses");
    assert_eq!((level.width, level.height), (5, 3));
    assert_eq!(level.boxes, vec![7]);
    assert_eq!(level.goals, vec![8]);
    assert_eq!(level.to_xsb(), SMALL);
    assert_eq!(Level::from_xsb(&level.to_xsb()), Ok(level.clone()));
    level.replay("R").expect("one push solves it");
    assert!(
        level.replay("r").is_err(),
        "a push must be written upper case"
    );
    assert!(level.replay("").is_err(), "not solved yet");
    let json = serde_json::to_string(&level).expect("json");
    assert_eq!(serde_json::from_str::<Level>(&json).expect("parse"), level);
}

#[test]
fn replay_follows_the_rules() {
    let level = Level::from_xsb(
        "\
######
#    #
# $$ #
#@.. #
######
",
    )
    .expect("parses");
    // Pushing a box into the other box is refused, as is walking into a wall.
    assert!(matches!(
        level.replay("uR"),
        Err(GameError::Replay { index: 1, .. })
    ));
    assert!(matches!(
        level.replay("l"),
        Err(GameError::Replay { index: 0, .. })
    ));
    // Up twice, right, push the left box down; up, right, push the other down.
    level.replay("uurDurD").expect("solves");
    let end = level.play("uurD").expect("plays");
    assert_eq!(end.boxes, vec![15, 20]);
}

#[test]
fn malformed_xsb_is_refused_with_line_and_column() {
    for (text, line, column, what) in [
        ("#####\n# $.#\n#####\n", 1, 1, "no player"),
        ("#####\n#@$ #\n#####\n", 1, 1, "1 boxes but 0 goals"),
        ("#####\n#@$x#\n#####\n", 2, 4, "unknown character"),
        ("#####\n#@$. \n#####\n", 2, 5, "not closed"),
        ("#####\n#@$.#\n#####\n#@###\n", 4, 2, "second player"),
    ] {
        match Level::from_xsb(text) {
            Err(GameError::Parse {
                line: l,
                column: c,
                message,
            }) => {
                assert!(message.contains(what), "{message} (wanted {what})");
                assert_eq!((l, c), (line, column), "{what}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn collections_keep_titles_and_round_trip() {
    let text = "\
; Tiny
#####
#@$.#
#####

Title: Two boxes
######
#@$ .#
# $ .#
######
";
    let levels = parse_collection(text).expect("parses");
    assert_eq!(levels.len(), 2);
    assert_eq!(levels[0].title, "Tiny");
    assert_eq!(levels[1].title, "Two boxes");
    assert_eq!(levels[1].level.boxes.len(), 2);
    let printed = print_collection(&levels);
    assert_eq!(parse_collection(&printed).expect("reparses"), levels);
    // An error inside the second level names the file's line.
    let bad = text.replace("# $ .#", "# $ ?#");
    match parse_collection(&bad) {
        Err(GameError::Parse { line, column, .. }) => assert_eq!((line, column), (9, 5)),
        other => panic!("{other:?}"),
    }
}
