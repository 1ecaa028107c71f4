//! The source's generator: a binary space partition of the grid into rooms, a
//! door tree with a few extra (sometimes one-way) doors, then puzzle agents
//! chosen at random (Algorithm 1): each adds a key or a switch, and the change
//! is kept only if the level stays solvable and free of dead ends.

use super::DungeonParams;
use super::level::{Door, Key, Level, MAX_KEYS, MAX_ROOMS, MAX_SWITCHES, Passage, Room, Switch};
use super::solve::{Action, Analysis, Rules, analyse};
use crate::reason::{Code, Status};
use crate::rng::Rng;
use crate::search::Bfs;
use crate::{Budget, Rejection};

/// Builds a level: map, then puzzles until the agents fail more than
/// `max_failures` times or a target is met.
pub fn generate(
    params: &DungeonParams,
    rng: &mut Rng,
    budget: &Budget,
) -> Result<Level, Rejection> {
    // Each change is verified within the generator's own, smaller state cap.
    let budget = &budget.with_nodes(budget.max_nodes.min(params.max_states));
    let mut level = map(params, rng)?;
    let mut analysis = checked(&level, budget)?.ok_or_else(|| {
        Rejection::refused(Code::Internal, "the map without puzzles is not solvable")
    })?;
    let mut failures = 0;
    let mut puzzles = 0;
    while failures <= params.max_failures {
        if params.max_puzzles > 0 && puzzles >= params.max_puzzles {
            break;
        }
        if params.target_complexity > 0 && analysis.complexity() >= params.target_complexity {
            break;
        }
        let candidate = match rng.weighted(&[params.key_weight, params.switch_weight]) {
            Some(0) => add_key(&level, &analysis, params, rng),
            _ => add_switch(&level, &analysis, rng),
        };
        let kept = match candidate {
            Some(c) => checked(&c, budget)?.map(|a| (c, a)),
            None => None,
        };
        match kept {
            Some((c, a)) => {
                level = c;
                analysis = a;
                puzzles += 1;
            }
            None => failures += 1,
        }
    }
    Ok(level)
}

/// The analysis of a level if it is solvable without dead ends within the node
/// budget; `None` if not (a failed change); the watchdog's timeout passes on.
fn checked(level: &Level, budget: &Budget) -> Result<Option<Analysis>, Rejection> {
    match analyse(level, budget) {
        Ok(a) if a.dead_states == 0 => Ok(Some(a)),
        Ok(_) | Err(Rejection::Unsolvable) => Ok(None),
        Err(e) if e.status() == Status::Rejected => Ok(None),
        Err(e) => Err(e),
    }
}

/// The map: BSP rooms, the tree of sibling doors, extra doors, start and exit.
fn map(params: &DungeonParams, rng: &mut Rng) -> Result<Level, Rejection> {
    let mut rooms = Vec::new();
    let mut links = Vec::new();
    split(
        Room {
            x: 1,
            y: 1,
            w: params.width - 2,
            h: params.height - 2,
        },
        params.min_room,
        rng,
        &mut rooms,
        &mut links,
    );
    // The solver keeps a room set in 64 bits.
    if rooms.len() > MAX_ROOMS {
        return Err(Rejection::refused(
            Code::CapHit,
            format!(
                "the map has {} rooms, more than {MAX_ROOMS}: a smaller grid or a larger \
                 min_room keeps it under",
                rooms.len()
            ),
        ));
    }
    // Number rooms in row-major order of their top-left cell.
    let mut order: Vec<usize> = (0..rooms.len()).collect();
    order.sort_by_key(|&i| (rooms[i].y, rooms[i].x));
    let mut new_id = vec![0; rooms.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new;
    }
    let rooms: Vec<Room> = order.iter().map(|&i| rooms[i]).collect();
    let mut tree: Vec<(usize, usize)> = links
        .iter()
        .map(|&(a, b)| (new_id[a].min(new_id[b]), new_id[a].max(new_id[b])))
        .collect();
    tree.sort_unstable();
    if tree.len() + 1 != rooms.len() {
        return Err(Rejection::refused(
            Code::Internal,
            "the room tree is not connected",
        ));
    }
    let mut doors = Vec::new();
    for i in 0..rooms.len() {
        for j in i + 1..rooms.len() {
            let Some(mut door) = door_between(&rooms, i, j) else {
                continue;
            };
            if tree.binary_search(&(i, j)).is_err() {
                if !rng.chance(params.loop_chance) {
                    continue;
                }
                if rng.chance(params.one_way_chance) {
                    door.passage = if rng.chance(0.5) {
                        Passage::AToB
                    } else {
                        Passage::BToA
                    };
                }
            }
            doors.push(door);
        }
    }
    doors.sort_by_key(|d| (d.y, d.x));
    let start = rng.index(rooms.len());
    let exit = farthest(&rooms, &doors, start);
    Ok(Level {
        width: params.width,
        height: params.height,
        rooms,
        doors,
        start,
        exit,
        keys: Vec::new(),
        switches: Vec::new(),
    })
}

/// Splits `r` while a part can keep `min` floor cells each side of a wall;
/// records each split's door as a pair of leaves facing across the wall.
fn split(r: Room, min: u16, rng: &mut Rng, rooms: &mut Vec<Room>, links: &mut Vec<(usize, usize)>) {
    let can_v = r.w > 2 * min;
    let can_h = r.h > 2 * min;
    if !can_v && !can_h {
        rooms.push(r);
        return;
    }
    let vertical = match (can_v, can_h) {
        (true, false) => true,
        (false, true) => false,
        _ if r.w != r.h => r.w > r.h,
        _ => rng.chance(0.5),
    };
    let first = rooms.len();
    let (a, b) = if vertical {
        let cut = rng.between(u32::from(min), u32::from(r.w - min - 1)) as u16;
        (
            Room { w: cut, ..r },
            Room {
                x: r.x + cut + 1,
                w: r.w - cut - 1,
                ..r
            },
        )
    } else {
        let cut = rng.between(u32::from(min), u32::from(r.h - min - 1)) as u16;
        (
            Room { h: cut, ..r },
            Room {
                y: r.y + cut + 1,
                h: r.h - cut - 1,
                ..r
            },
        )
    };
    split(a, min, rng, rooms, links);
    let middle = rooms.len();
    split(b, min, rng, rooms, links);
    let facing: Vec<(usize, usize)> = (first..middle)
        .flat_map(|i| (middle..rooms.len()).map(move |j| (i, j)))
        .filter(|&(i, j)| door_between(rooms, i, j).is_some())
        .collect();
    if !facing.is_empty() {
        links.push(facing[rng.index(facing.len())]);
    }
}

/// The door cell between rooms `i` and `j` if they face each other across one
/// wall: the middle of the shared stretch.
fn door_between(rooms: &[Room], i: usize, j: usize) -> Option<Door> {
    let (p, q) = (rooms[i], rooms[j]);
    let overlap = |a0: u16, a1: u16, b0: u16, b1: u16| {
        let (lo, hi) = (a0.max(b0), a1.min(b1));
        (hi > lo).then(|| lo + (hi - lo - 1) / 2)
    };
    let door = |x, y, a, b| Door {
        x,
        y,
        a,
        b,
        passage: Passage::Both,
    };
    if p.x + p.w + 1 == q.x {
        overlap(p.y, p.y + p.h, q.y, q.y + q.h).map(|y| door(p.x + p.w, y, i, j))
    } else if q.x + q.w + 1 == p.x {
        overlap(p.y, p.y + p.h, q.y, q.y + q.h).map(|y| door(q.x + q.w, y, j, i))
    } else if p.y + p.h + 1 == q.y {
        overlap(p.x, p.x + p.w, q.x, q.x + q.w).map(|x| door(x, p.y + p.h, i, j))
    } else if q.y + q.h + 1 == p.y {
        overlap(p.x, p.x + p.w, q.x, q.x + q.w).map(|x| door(x, q.y + q.h, j, i))
    } else {
        None
    }
}

/// The room farthest from `from` in door steps (doors passed either way),
/// the lowest-numbered among equals.
fn farthest(rooms: &[Room], doors: &[Door], from: usize) -> usize {
    let bfs = Bfs::new(rooms.len(), [from], |r| {
        doors.iter().filter_map(move |d| match r {
            _ if d.a == r => Some(d.b),
            _ if d.b == r => Some(d.a),
            _ => None,
        })
    });
    bfs.order()
        .max_by_key(|&r| (bfs.distance(r), std::cmp::Reverse(r)))
        .unwrap_or(from)
}

/// Doors that some key or switch already controls.
fn controlled(level: &Level) -> Vec<bool> {
    let mut c = vec![false; level.doors.len()];
    for &d in level.keys.iter().flat_map(|k| &k.opens) {
        c[d] = true;
    }
    for s in &level.switches {
        for &d in s.on.iter().chain(&s.off) {
            c[d] = true;
        }
    }
    c
}

/// Most doors one lock or switch closes at once.
const MAX_CUT: usize = 3;

/// A state on the current solution, and a bottleneck there: doors whose
/// closing cuts off the room of the action taken from that state.
struct Site {
    config: u64,
    room: usize,
    cut: Vec<usize>,
}

/// Picks a state on the solution and its bottleneck: one of the doors that
/// alone cut the action's room off (bridges), or else a minimum cut of at most
/// [`MAX_CUT`] doors (max-flow, unit capacities).
fn site(level: &Level, analysis: &Analysis, rules: &Rules, rng: &mut Rng) -> Option<Site> {
    let i = rng.index(analysis.path.len());
    let (config, room) = analysis.path[i];
    let target = match analysis.solution[i] {
        Action::Exit => level.exit,
        Action::Key(k) => level.keys[k].room,
        Action::Switch(s) => level.switches[s].room,
    };
    let controlled = controlled(level);
    let bridges: Vec<usize> = (0..level.doors.len())
        .filter(|&d| !controlled[d] && rules.enabled(config, d))
        .filter(|&d| rules.view(config, &[d]).reach[room] >> target & 1 == 0)
        .collect();
    let cut = if bridges.is_empty() {
        min_cut(level, rules, config, room, target)?
    } else {
        vec![bridges[rng.index(bridges.len())]]
    };
    Some(Site { config, room, cut })
}

/// A minimum set of enabled doors separating `source` from `target`, if it
/// has at most [`MAX_CUT`] doors: augmenting paths, then the doors leaving
/// what the source still reaches in the residual graph.
fn min_cut(
    level: &Level,
    rules: &Rules,
    config: u64,
    source: usize,
    target: usize,
) -> Option<Vec<usize>> {
    // Arcs as (from, to, door, capacity); arc i ^ 1 is arc i's reverse.
    let mut arcs: Vec<(usize, usize, usize, u8)> = Vec::new();
    for (d, door) in level.doors.iter().enumerate() {
        if !rules.enabled(config, d) {
            continue;
        }
        for (u, v) in [(door.a, door.b), (door.b, door.a)] {
            if door.leads(u, v) {
                arcs.push((u, v, d, 1));
                arcs.push((v, u, d, 0));
            }
        }
    }
    let n = level.rooms.len();
    let residual_reach = |arcs: &[(usize, usize, usize, u8)]| {
        let mut came: Vec<Option<usize>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[source] = true;
        let mut queue = std::collections::VecDeque::from([source]);
        while let Some(u) = queue.pop_front() {
            for (i, &(from, to, _, cap)) in arcs.iter().enumerate() {
                if from == u && cap > 0 && !seen[to] {
                    seen[to] = true;
                    came[to] = Some(i);
                    queue.push_back(to);
                }
            }
        }
        (seen, came)
    };
    for _ in 0..=MAX_CUT {
        let (seen, came) = residual_reach(&arcs);
        if !seen[target] {
            let mut cut: Vec<usize> = arcs
                .iter()
                .step_by(2)
                .filter(|&&(from, to, _, _)| seen[from] && !seen[to])
                .map(|&(_, _, d, _)| d)
                .collect();
            cut.sort_unstable();
            cut.dedup();
            return (!cut.is_empty() && cut.len() <= MAX_CUT).then_some(cut);
        }
        let mut v = target;
        while let Some(i) = came[v] {
            arcs[i].3 -= 1;
            arcs[i ^ 1].3 += 1;
            v = arcs[i].0;
        }
    }
    None
}

/// The first free cell of room `r` (row-major), not in `taken`.
fn free_cell(level: &Level, r: usize, taken: &[(u16, u16)]) -> Option<(u16, u16)> {
    let room = level.rooms[r];
    (room.y..room.y + room.h)
        .flat_map(|y| (room.x..room.x + room.w).map(move |x| (x, y)))
        .find(|&(x, y)| !level.is_marked(x, y) && !taken.contains(&(x, y)))
}

/// The collectible agent (Algorithm 2): lock a bottleneck door of a state on
/// the solution; its key goes to the most isolated room the player can still
/// reach there (farthest in door steps, then fewest doors, then lowest number).
/// With `chains`, half the time the key lies in a chest whose own key takes
/// the isolated room (seed Fig. 4).
fn add_key(
    level: &Level,
    analysis: &Analysis,
    params: &DungeonParams,
    rng: &mut Rng,
) -> Option<Level> {
    let rules = Rules::new(level);
    let site = site(level, analysis, &rules, rng)?;
    let chained = params.chains && rng.chance(0.5);
    if level.keys.len() + 1 + usize::from(chained) > MAX_KEYS {
        return None;
    }
    // Door steps from the player's room with the door locked.
    let n = level.rooms.len();
    let (cut, config, rules) = (&site.cut, site.config, &rules);
    let open_doors = |r: usize| {
        level.doors.iter().enumerate().flat_map(move |(i, d)| {
            let usable = !cut.contains(&i) && rules.enabled(config, i);
            [d.a, d.b]
                .into_iter()
                .filter(move |&next| usable && d.leads(r, next))
        })
    };
    let bfs = Bfs::new(n, [site.room], open_doors);
    let mut region: Vec<usize> = (0..n).filter(|&r| bfs.reached(r)).collect();
    region.sort_by_key(|&r| (std::cmp::Reverse(bfs.distance(r)), open_doors(r).count(), r));
    let mut next = level.clone();
    let (far, far_cell) = region
        .iter()
        .find_map(|&r| free_cell(level, r, &[]).map(|c| (r, c)))?;
    if chained {
        let chest_room = region[rng.index(region.len())];
        let chest_cell = free_cell(level, chest_room, &[far_cell])?;
        let opener = next.keys.len();
        next.keys.push(Key {
            room: far,
            x: far_cell.0,
            y: far_cell.1,
            chest: None,
            opens: Vec::new(),
        });
        next.keys.push(Key {
            room: chest_room,
            x: chest_cell.0,
            y: chest_cell.1,
            chest: Some(opener),
            opens: site.cut,
        });
    } else {
        next.keys.push(Key {
            room: far,
            x: far_cell.0,
            y: far_cell.1,
            chest: None,
            opens: site.cut,
        });
    }
    Some(next)
}

/// The switch agent: a bottleneck door of a state on the solution opens only
/// while a new switch is on, and another door the player can reach there
/// only while it is off, so the two parts are reachable in turn, never
/// together. The switch goes in a random room the player can reach.
fn add_switch(level: &Level, analysis: &Analysis, rng: &mut Rng) -> Option<Level> {
    if level.switches.len() >= MAX_SWITCHES {
        return None;
    }
    let rules = Rules::new(level);
    let site = site(level, analysis, &rules, rng)?;
    // What the player reaches there with the cut closed.
    let region = rules.view(site.config, &site.cut).reach[site.room];
    let inside = |r: usize| region >> r & 1 == 1;
    let controlled = controlled(level);
    let others: Vec<usize> = (0..level.doors.len())
        .filter(|&d| !site.cut.contains(&d) && !controlled[d] && rules.enabled(site.config, d))
        .filter(|&d| inside(level.doors[d].a) && inside(level.doors[d].b))
        .collect();
    if others.is_empty() {
        return None;
    }
    let off = others[rng.index(others.len())];
    let rooms: Vec<(usize, (u16, u16))> = (0..level.rooms.len())
        .filter(|&r| inside(r))
        .filter_map(|r| free_cell(level, r, &[]).map(|c| (r, c)))
        .collect();
    if rooms.is_empty() {
        return None;
    }
    let (room, (x, y)) = rooms[rng.index(rooms.len())];
    let mut next = level.clone();
    next.switches.push(Switch {
        room,
        x,
        y,
        on: site.cut,
        off: vec![off],
    });
    Some(next)
}
