const list = document.getElementById('items');
function count() {
  const left = list.querySelectorAll('.todo:not(.done)').length;
  document.getElementById('left').textContent = left === 0 ? 'All packed!' : left + ' left to pack';
}
list.addEventListener('click', (event) => {
  if (event.target.classList.contains('todo')) {
    event.target.classList.toggle('done');
    count();
  }
});
function add() {
  const input = document.getElementById('new-item');
  const text = input.value.trim();
  if (!text) return;
  const li = document.createElement('li');
  li.className = 'todo';
  li.textContent = text;
  list.appendChild(li);
  input.value = '';
  count();
}
document.getElementById('add-item').addEventListener('click', add);

