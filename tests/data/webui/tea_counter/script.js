let cups = 0;
document.getElementById('add').addEventListener('click', () => {
  cups += 1;
  document.getElementById('count').textContent = cups + (cups === 1 ? ' cup' : ' cups') + ' today';
});
document.getElementById('greet').addEventListener('click', () => {
  const name = document.getElementById('name').value.trim() || 'stranger';
  const greeting = document.getElementById('greeting');
  greeting.textContent = 'Hello, ' + name + '!';
  greeting.classList.remove('hidden');
});
