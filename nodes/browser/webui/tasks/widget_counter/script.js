const GOAL = 8;
let glasses = 0;
function show() {
  document.getElementById('value').textContent = String(glasses);
  document.getElementById('fill').style.width = (320 * glasses / GOAL) + 'px';
  document.getElementById('status').textContent = glasses >= GOAL ? 'Goal reached!' : glasses + ' of ' + GOAL + ' today';
}
document.getElementById('plus').addEventListener('click', () => { glasses = Math.min(GOAL, glasses + 1); show(); });
document.getElementById('minus').addEventListener('click', () => { glasses = Math.max(0, glasses - 1); show(); });
document.getElementById('reset').addEventListener('click', () => { glasses = 0; show(); });
